"""``tilebound html [MODEL ...] -o DIR``: the files it writes, what a page holds, and the bad input it refuses
(the folder rules of ``latex --split``, plus a non-empty folder that tilebound did not write)."""

from __future__ import annotations

import re

import pytest

from tilebound import output
from tilebound.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_one_page_per_model_and_an_index(capsys, tmp_path):
    folder = tmp_path / "site"
    rc, out, err = run(capsys, "html", "gemm.tiled", "gemm.l2.lru", "-o", str(folder), "--no-figures")
    assert rc == 0, err
    assert sorted(p.name for p in folder.iterdir()) == ["gemm.l2.lru.html", "gemm.tiled.html", "index.html"]
    assert out.count("wrote ") == 3
    for page in folder.iterdir():
        assert output.is_ours(str(page))                      # marked as tilebound's, as latex fragments are
        text = page.read_text(encoding="utf-8")
        assert text.startswith("<!-- written by tilebound") and "<!DOCTYPE html>" in text
    index = (folder / "index.html").read_text(encoding="utf-8")
    assert 'href="gemm.tiled.html"' in index and 'href="gemm.l2.lru.html"' in index


def test_a_page_is_self_contained(capsys, tmp_path):
    folder = tmp_path / "site"
    assert run(capsys, "html", "attention.fa1.fwd.paper", "-o", str(folder))[0] == 0
    text = (folder / "attention.fa1.fwd.paper.html").read_text(encoding="utf-8")
    # no network when viewed: no external script, style sheet, image or font
    assert not re.search(r'<(script|link|img|iframe)[^>]*(src|href)="(https?:)?//', text)
    assert "@import" not in text and "url(http" not in text
    for p in ("N", "d", "M"):
        assert f'id="input-{p}"' in text
    for q in ("reads", "writes", "flops", "total"):
        assert f'id="result-{q}"' in text
    assert "<math" in text and 'id="listing"' in text and "<table" in text


@pytest.mark.extra("plot")
def test_the_figure_is_inline_svg(capsys, tmp_path):
    folder = tmp_path / "site"
    assert run(capsys, "html", "gemm.tiled", "-o", str(folder))[0] == 0
    text = (folder / "gemm.tiled.html").read_text(encoding="utf-8")
    assert "<figure><svg" in text and "<?xml" not in text


def test_no_numbers_baked_in_for_the_expressions(capsys, tmp_path):
    # the calculator's values come from the page's code: at the default point none of them is in the page
    from symbolic import registry
    m = registry.get("attention.fa1.fwd.paper")
    folder = tmp_path / "site"
    assert run(capsys, "html", m.name, "-o", str(folder), "--no-tables", "--no-figures")[0] == 0
    text = (folder / f"{m.name}.html").read_text(encoding="utf-8")
    for q, v in m.evaluate(**m.check_point({})).items():
        assert str(v) not in text, q


def test_an_algorithm_quantity_is_a_table_at_stated_points(capsys, tmp_path):
    from symbolic import registry
    m = registry.get("gemm.l2.lru")
    folder = tmp_path / "site"
    assert run(capsys, "html", m.name, "-o", str(folder), "--no-figures")[0] == 0
    text = (folder / f"{m.name}.html").read_text(encoding="utf-8")
    assert 'id="result-hbm_reads_lru"' not in text
    assert 'id="table-hbm_reads_lru"' in text and "computed by an algorithm" in text
    value = m.evaluate("hbm_reads_lru", **m.check_point({}))
    assert f'<td class="num">{value}</td>' in text


def test_rewriting_its_own_folder_is_allowed(capsys, tmp_path):
    folder = tmp_path / "site"
    assert run(capsys, "html", "gemm.tiled", "-o", str(folder), "--no-figures")[0] == 0
    assert run(capsys, "html", "gemm.tiled", "-o", str(folder), "--no-figures")[0] == 0


def test_an_existing_folder_tilebound_did_not_write_is_refused(capsys, tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "thesis.tex").write_text("mine")
    rc, _, err = run(capsys, "html", "gemm.tiled", "-o", str(folder), "--no-figures")
    assert rc == 2 and err.startswith("tilebound: output: ") and "--force" in err
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]
    assert run(capsys, "html", "gemm.tiled", "-o", str(folder), "--no-figures", "--force")[0] == 0
    assert (folder / "thesis.tex").read_text() == "mine"


def test_an_edited_page_is_refused_without_force(capsys, tmp_path):
    folder = tmp_path / "site"
    assert run(capsys, "html", "gemm.tiled", "-o", str(folder), "--no-figures")[0] == 0
    page = folder / "gemm.tiled.html"
    page.write_text(page.read_text(encoding="utf-8") + "<!-- my edit -->", encoding="utf-8")
    rc, _, err = run(capsys, "html", "gemm.tiled", "-o", str(folder), "--no-figures")
    assert rc == 2 and err.startswith("tilebound: output: ")
    assert page.read_text(encoding="utf-8").endswith("<!-- my edit -->")


def test_a_file_as_the_folder_is_refused(capsys, tmp_path):
    f = tmp_path / "x.html"
    f.write_text("")
    rc, _, err = run(capsys, "html", "gemm.tiled", "-o", str(f))
    assert rc == 2 and "not a folder" in err and len(err.strip().splitlines()) == 1


def test_an_unknown_model_is_one_line(capsys, tmp_path):
    rc, _, err = run(capsys, "html", "gemm.tiledd", "-o", str(tmp_path / "s"))
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "gemm.tiled" in err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("name", ["latency.littles_law", "latency.pipeline", "latency.pipeline_sync",
                                  "latency.pingpong"])
def test_a_model_without_defaults_starts_at_a_point_of_its_check(capsys, tmp_path, name):
    # the latency models have no default for their times and bandwidths: every input starts filled, at a point of
    # the grid python -m verify checks the model at, with no count at its least (not a one-tile pipeline)
    from fractions import Fraction

    from symbolic import registry
    from tilebound.numbers import parse_number
    from verify.core import Check, Property
    from verify.registry import checks_of
    folder = tmp_path / "site"
    assert run(capsys, "html", name, "-o", str(folder), "--no-figures")[0] == 0
    text = (folder / f"{name}.html").read_text(encoding="utf-8")
    m = registry.get(name)
    start = {p.name: parse_number(p.name, re.search(rf'<input id="input-{p.name}"[^>]*value="([^"]*)"', text).group(1))
             for p in m.params}
    m.check_point(start)                                     # a point the model accepts
    missing = [p for p in m.params if p.name not in m.defaults]
    grid = [pt for c in checks_of(name) if isinstance(c, (Check, Property)) for pt in c.grid(False)]
    assert any(all(Fraction(pt[p.name]) == Fraction(start[p.name]) for p in missing) for pt in grid)
    assert all(start[p.name] > p.least for p in missing if p.counts)
    assert 'id="start-note"' in text and "python -m verify" in text
    example = re.search(r"e\.g\. <code>#([^<]*)</code>", text).group(1)       # the calculator's example fragment
    assert "..." not in example and all(f"{p.name}=" in example for p in m.params)


# ----------------------------------------------------------------------------------- --jobs
@pytest.mark.extra("plot")
def test_pages_drawn_in_workers_are_those_of_one_process(capsys, tmp_path):
    """``--jobs 2`` draws each page in a worker; every page and the index are byte for byte those of ``--jobs 1``,
    figures included (their SVG carries no drawing date, and ids from a fixed salt)."""
    names = ["gemm.tiled", "latency.pipeline", "attention.fa1.fwd.paper"]
    pages = {}
    for jobs in ("1", "2"):
        rc, out, err = run(capsys, "html", *names, "--jobs", jobs, "-o", str(tmp_path / jobs))
        assert rc == 0, err
        pages[jobs] = {p.name: p.read_bytes() for p in (tmp_path / jobs).iterdir()}
    assert pages["1"] == pages["2"]
    assert sorted(pages["1"]) == sorted([f"{n}.html" for n in names] + ["index.html"])
    assert all(b"<svg" in pages["1"][f"{n}.html"] for n in ("gemm.tiled", "attention.fa1.fwd.paper"))  # figures


@pytest.mark.parametrize("jobs", ["0", "257", "many", ""])
def test_a_bad_jobs_is_one_line_before_any_page(capsys, tmp_path, jobs):
    rc, _, err = run(capsys, "html", "gemm.tiled", "--jobs", jobs, "-o", str(tmp_path / "site"))
    assert rc == 2 and err.startswith("tilebound: jobs: ") and len(err.splitlines()) == 1
    assert not (tmp_path / "site").exists()
