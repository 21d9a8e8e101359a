"""The tuning cache (tuning.cache): one entry per config, a grown space measures only its new configs,
atomic writes, and corrupt or foreign files refused (BadInput naming ``cache``), never reused or overwritten."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

pytest.importorskip("filelock", reason="the tuning cache locks each file with filelock (the tune extra)")

from base.errors import BadInput  # noqa: E402
from tuning import schedule  # noqa: E402
from tuning.cache import TuningCache, shape_key, space_version  # noqa: E402

SHAPE = (16, 4096, 4096)


class Counting:
    """A measurement function that records what it was asked."""

    def __init__(self, value=1e-5):
        self.calls = []
        self.value = value

    def __call__(self, configs):
        self.calls.append(list(configs))
        return [self.value * (1 + i) for i in range(len(configs))]


def test_measurements_round_trip_through_the_file(tmp_path):
    c = TuningCache(tmp_path)
    times, new = c.times(SHAPE)
    assert new == 6000
    np.testing.assert_array_equal(times, schedule.times_for_shape(*SHAPE))   # inf where it cannot launch
    again, new = TuningCache(tmp_path).times(SHAPE)
    assert new == 0
    np.testing.assert_array_equal(again, times)
    doc = json.loads((tmp_path / "H100" / f"{shape_key(SHAPE)}.json").read_text())
    assert doc["key"] == "M16_N4096_K4096" and doc["gpu"] == "H100" and len(doc["entries"]) == 6000
    assert sum(v is None for v in doc["entries"].values()) == 6000 - 3744


def test_adding_configs_measures_only_the_new_ones(tmp_path):
    c = TuningCache(tmp_path)
    cfgs = schedule.all_configs()
    m = Counting()
    c.measure("k", cfgs[:100], m)
    times, new = c.measure("k", cfgs[:150], m)
    assert new == 50 and m.calls[1] == list(cfgs[100:150])
    assert times[:100].tolist() == [1e-5 * (1 + i) for i in range(100)]


def test_a_space_with_a_new_value_keeps_its_version_and_measures_only_the_new_configs(tmp_path, monkeypatch):
    c = TuningCache(tmp_path)
    m = Counting()
    c.measure("k", schedule.all_configs()[:20], m)
    v = space_version()
    grown = dict(schedule.SPACE)
    grown["s"] = grown["s"] + (6,)                     # a new value of a knob: the space grows
    monkeypatch.setattr(schedule, "SPACE", MappingProxyType(grown))
    assert space_version() == v
    extra = [schedule.GemmConfig(16, 16, 16, 1, 6, g) for g in (1, 4, 8)]
    times, new = TuningCache(tmp_path).measure("k", list(schedule.all_configs()[:20]) + extra, m)
    assert new == 3 and m.calls[-1] == extra


def test_the_version_follows_the_time_model_constants():
    changed = dataclasses.replace(schedule.H100_TC, smem_bytes_per_s=30e12)
    assert space_version(changed) != space_version(schedule.H100_TC)
    assert space_version("H200") != space_version("H100")


def _refused_and_kept(tmp_path, corrupt) -> BadInput:
    """Write a cache file, ``corrupt`` it, and return the refusal of loading it, after checking that measuring
    into it neither measures nor overwrites it."""
    TuningCache(tmp_path).measure("k", schedule.all_configs()[:3], Counting())
    path = tmp_path / "H100" / "k.json"
    content = corrupt(json.loads(path.read_text()))
    path.write_bytes(content)
    with pytest.raises(BadInput) as e:
        TuningCache(tmp_path).load("k")
    m = Counting()
    with pytest.raises(BadInput):
        TuningCache(tmp_path).measure("k", schedule.all_configs()[:5], m)
    assert m.calls == [] and path.read_bytes() == content                # not measured, not overwritten
    return e.value


def _with_entries(entries: str):
    """The valid file's text with its entries replaced by ``entries`` (JSON text, may hold NaN)."""
    return lambda doc: json.dumps({**doc, "entries": {}}).replace('"entries": {}', f'"entries": {entries}').encode()


@pytest.mark.parametrize("corrupt", [
    lambda doc: b"\x00\x01garbage",
    lambda doc: json.dumps(doc).encode()[:40],                                  # truncated
    lambda doc: b"[]",
    lambda doc: json.dumps({k: v for k, v in doc.items() if k != "knobs"}).encode(),
    _with_entries('{"16,16,16,1,1,1": -1.0}'),                                   # a negative time
    _with_entries('{"16,16,16,1,1,1": NaN}'),                                    # not a number
    _with_entries('{"16,16,16,1,1,1": true}'),
    _with_entries('{"16,16,16,1,1,2": 1e-5}'),                                   # G_M 2: not in the space
    _with_entries('{"16,16,16": 1e-5}'),
    _with_entries('[1, 2]'),
    _with_entries('{"16,16,16,1,1,1": ' + "[" * 100_000 + "]" * 100_000 + "}"),     # deeper than the parser goes
    lambda doc: b"[" * 200_000 + b"]" * 200_000,
], ids=["bytes", "truncated", "list", "no-knobs", "negative", "nan", "bool", "foreign-config", "short-config",
        "entries-list", "nested-entry", "nested-file"])
def test_a_corrupt_file_is_refused_and_left_alone(tmp_path, corrupt):
    refused = _refused_and_kept(tmp_path, corrupt)
    assert refused.param == "cache" and "delete it" in str(refused)


def test_a_file_from_another_space_version_is_refused(tmp_path):
    c = TuningCache(tmp_path)
    c.measure(shape_key(SHAPE), schedule.all_configs()[:3], Counting())
    path = tmp_path / "H100" / f"{shape_key(SHAPE)}.json"
    doc = json.loads(path.read_text())
    doc["space_version"] = "0123456789abcdef"
    path.write_text(json.dumps(doc))
    with pytest.raises(BadInput) as e:
        TuningCache(tmp_path).times(SHAPE)
    assert e.value.param == "cache" and "another space" in str(e.value)


def test_a_file_copied_under_another_gpu_is_refused(tmp_path):
    TuningCache(tmp_path).measure("k", schedule.all_configs()[:3], Counting())
    (tmp_path / "H200").mkdir()
    (tmp_path / "H200" / "k.json").write_bytes((tmp_path / "H100" / "k.json").read_bytes())
    with pytest.raises(BadInput) as e:
        TuningCache(tmp_path, "H200").load("k")
    assert e.value.param == "cache"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    c = TuningCache(tmp_path)
    c.measure("k", schedule.all_configs()[:3], Counting())
    path = tmp_path / "H100" / "k.json"
    before = path.read_bytes()

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("base.files.os.replace", boom)               # the one atomic write
    with pytest.raises(BadInput) as e:
        c.measure("k", schedule.all_configs()[:6], Counting())
    assert e.value.param == "cache" and "No space left" in str(e.value)
    assert path.read_bytes() == before
    assert set(os.listdir(path.parent)) - {c.lock_path("k").name} == {"k.json"}     # the lock file stays, by design


def test_bad_keys_and_folders(tmp_path):
    with pytest.raises(BadInput) as e:
        TuningCache(tmp_path).path("../escape")
    assert e.value.param == "key"
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(BadInput) as e:
        TuningCache(f)
    assert e.value.param == "cache"
    with pytest.raises(BadInput) as e:
        TuningCache(tmp_path, gpu="TPU")
    assert e.value.param == "gpu"


def test_a_cache_of_the_old_dialect_is_refused_as_foreign(tmp_path):
    """A file written before the knobs took the models' names (``bm, bn, bk, warps, stages, group``; space
    version e14fa691ea19c515 on the H100, as that release wrote it) is another space: refused, not reused,
    left on disk as it was."""
    assert list(schedule.SPACE) == ["B_M", "B_N", "B_K", "warps", "s", "G_M"]
    assert space_version() != "e14fa691ea19c515"
    path = tmp_path / "H100" / f"{shape_key(SHAPE)}.json"
    path.parent.mkdir()
    old = {"format": 1, "gpu": "H100", "space_version": "e14fa691ea19c515", "key": shape_key(SHAPE),
           "knobs": ["bm", "bn", "bk", "warps", "stages", "group"],
           "entries": {"256,128,32,8,4,1": 0.000148, "256,256,128,8,4,1": None}}
    path.write_text(json.dumps(old))
    for doc in (old, {**old, "space_version": space_version()}):       # the old knobs alone are enough
        path.write_text(json.dumps(doc))
        with pytest.raises(BadInput) as e:
            TuningCache(tmp_path).times(SHAPE)
        assert e.value.param == "cache" and "another space" in str(e.value) and "'bm'" in str(e.value)
        m = Counting()
        with pytest.raises(BadInput):
            TuningCache(tmp_path).measure(shape_key(SHAPE), schedule.all_configs()[:5], m)
        assert json.loads(path.read_text()) == doc and m.calls == []


# ------------------------------------------------------------------------------------- bad measurements
@pytest.mark.parametrize("bad", [float("nan"), 0.0, -1e-5, float("-inf"), None, "fast"])
def test_a_bad_measured_time_is_refused_naming_the_config_and_nothing_is_stored(tmp_path, bad):
    cfgs = list(schedule.all_configs()[:4])

    def measure(configs):
        return [1e-5, 2e-5, bad, 4e-5]

    with pytest.raises(BadInput) as e:
        TuningCache(tmp_path).measure("k", cfgs, measure)
    assert e.value.param == "measure" and str(cfgs[2]) in str(e.value)          # the config, in the models' names
    assert str(cfgs[2]) == "B_M=16 B_N=16 B_K=16 warps=1 s=1 G_M=8"
    assert not (tmp_path / "H100" / "k.json").exists()
    times, new = TuningCache(tmp_path).measure("k", cfgs, lambda cs: [3e-5] * len(cs))  # the next load is fine
    assert new == 4 and times.tolist() == [3e-5] * 4


def test_inf_is_a_failed_config_stored_as_null_and_a_wrong_count_is_refused(tmp_path):
    cfgs = list(schedule.all_configs()[:2])
    c = TuningCache(tmp_path)
    times, _ = c.measure("k", cfgs, lambda cs: [float("inf"), 1e-5])
    assert times.tolist() == [float("inf"), 1e-5]
    assert json.loads((tmp_path / "H100" / "k.json").read_text())["entries"] == {
        "16,16,16,1,1,1": None, "16,16,16,1,1,4": 1e-5}
    with pytest.raises(BadInput) as e:
        c.measure("j", cfgs, lambda cs: [1e-5])
    assert e.value.param == "measure" and "1 times for 2 configs" in str(e.value)


# ------------------------------------------------------------------------------------- concurrent writers
_WRITER = """
import sys, time
from pathlib import Path
from tuning import schedule
from tuning.cache import TuningCache
root, part, go = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
mine = [c for i, c in enumerate(schedule.all_configs()[:1200]) if i % 2 == part]
cache = TuningCache(root)
while not go.exists():
    time.sleep(0.001)
for b in range(0, len(mine), 20):                   # 30 writes each, interleaved with the other writer's
    cache.measure("shared", mine[b:b + 20], lambda cs: [1e-6 * (1 + schedule.all_configs().index(c)) for c in cs])
"""


def test_two_writer_processes_into_one_cache_file_lose_no_entry(tmp_path):
    """Two processes add the even and the odd configs of the first 1200, 20 at a time, to one file at the same
    moment: with the file's lock every entry survives, each with the time its writer measured (without it,
    a writer's merge misses what the other wrote in between and entries are lost)."""
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path / "cache"), str(part), str(go)], env=env,
                              stderr=subprocess.PIPE, text=True) for part in (0, 1)]
    time.sleep(0.5)
    go.touch()
    for p in procs:
        _, err = p.communicate()
        assert p.returncode == 0, err
    entries = TuningCache(tmp_path / "cache").load("shared")
    cfgs = schedule.all_configs()[:1200]
    assert len(entries) == 1200
    assert all(entries[c] == 1e-6 * (1 + i) for i, c in enumerate(cfgs))


def test_a_writer_that_cannot_get_the_lock_says_so(tmp_path, monkeypatch):
    import filelock

    c = TuningCache(tmp_path)
    c.measure("k", schedule.all_configs()[:1], Counting())
    monkeypatch.setattr("tuning.cache.LOCK_TIMEOUT_S", 0.05)
    with filelock.FileLock(str(c.lock_path("k"))):
        held = subprocess.run([sys.executable, "-c", "import sys; from tuning.cache import TuningCache; "
                               "from tuning import schedule; import tuning.cache as m; m.LOCK_TIMEOUT_S = 0.05; "
                               "TuningCache(sys.argv[1]).measure('k', schedule.all_configs()[1:2], lambda cs: [1e-5])",
                               str(tmp_path)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert held.returncode != 0 and "cache: another process has held" in held.stderr
    assert len(TuningCache(tmp_path).load("k")) == 1


# ------------------------------------------------------------------------------------- hostile values
def _field(name: str, json_text: str):
    """The valid file's text with field ``name``'s value replaced by ``json_text`` (JSON text, may be a huge int)."""
    return lambda doc: json.dumps({**doc, name: "@@"}).replace('"@@"', json_text).encode()


def _entry(key_json: str, time_json: str = "1e-05"):
    return _with_entries("{" + key_json + ": " + time_json + "}")


@pytest.mark.parametrize("corrupt", [
    _entry('"16,16,16,1,1,1"', "1" + "0" * 400),                  # 10**400: beyond a float (was OverflowError)
    _entry('"16,16,16,1,1,1"', "-1" + "0" * 400),
    _entry('"16,16,16,1,1,1"', '"' + "x" * 10_000 + '"'),          # a time that is a long string: shown short
    _field("format", "true"),                                      # True == 1 in Python: was read as format 1
    _field("format", "1.0"),
    _field("format", "1" + "0" * 400),                             # another format, shown as its digit count
    _entry('" 16,16,16,1,1,1"'),                                   # stray spaces: was read as the config
    _entry('"16, 16,16,1,1,1"'),
    _entry('"16,16,16,1,1,1 "'),
    _entry('"+16,16,16,1,1,1"'),
    _entry('"016,16,16,1,1,1"'),
    _entry('"1_6,16,16,1,1,1"'),                                   # int() reads 1_6 as 16
    _entry('"\\u0661\\u0666,16,16,1,1,1"'),                       # Arabic-Indic digits: int() reads them
    _entry('"' + "1," * 5000 + '1"'),                              # a 10k-character key: shown short
    _field("gpu", '"' + "G" * 10_000 + '"'),                       # foreign, but its values shown short
    _field("space_version", '"' + "f" * 10_000 + '"'),
    _field("key", '"' + "k" * 10_000 + '"'),
    _field("knobs", json.dumps(["x" * 10_000])),
    _field("knobs", json.dumps([f"k{i}" for i in range(5000)])),
], ids=["time-10**400", "time--10**400", "time-long-string", "format-true", "format-float", "format-huge",
        "key-space-before", "key-space-inside", "key-space-after", "key-plus", "key-leading-zero",
        "key-underscore", "key-unicode-digits", "key-10k-chars", "gpu-long", "version-long", "key-field-long",
        "knob-long", "knobs-many"])
def test_a_hostile_value_is_refused_as_corrupt_or_foreign_in_one_short_message(tmp_path, corrupt):
    """Each value a cache file holds is checked for its type and range (no traceback, no silent load), and a
    refusal shows what it read cut short: the message stays short whatever the file holds."""
    refused = _refused_and_kept(tmp_path, corrupt)
    message = str(refused)
    assert refused.param == "cache" and "delete it" in message, message
    assert len(message) < 400 and "\n" not in message, message


def test_a_file_larger_than_any_cache_file_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    TuningCache(tmp_path).measure("k", schedule.all_configs()[:3], Counting())
    size = (tmp_path / "H100" / "k.json").stat().st_size
    monkeypatch.setattr("tuning.cache.MAX_FILE_BYTES", size - 1)
    monkeypatch.setattr("tuning.cache.json.loads", lambda *a, **k: pytest.fail("parsed"))
    with pytest.raises(BadInput) as e:
        TuningCache(tmp_path).load("k")
    assert e.value.param == "cache" and "corrupt" in str(e.value) and "delete it" in str(e.value)


def test_the_written_entries_are_the_canonical_spelling_that_loads(tmp_path):
    """What the cache writes is what it reads back: every config of the space round-trips its key text."""
    c = TuningCache(tmp_path)
    c.measure("k", schedule.all_configs(), lambda cs: [1e-5] * len(cs))
    assert len(TuningCache(tmp_path).load("k")) == len(schedule.all_configs())
