"""Course adapter (lecture 1): console helpers the lecture scripts import.

Thin layer over :mod:`printing`: tables are rendered by tabulate, quantities by
:mod:`printing.human`.  No logic of its own.
"""

from tabulate import tabulate

from printing.human import fmt_bytes, fmt_time  # noqa: F401  (re-exported for the scripts)

__all__ = ["fmt_bytes", "fmt_time", "print_header", "print_observations", "print_table"]


def print_header(title: str) -> None:
    rule = "=" * 78
    print(f"\n{rule}\n{title}\n{rule}")


def print_table(headers, rows) -> None:
    print(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))


def print_observations(lines) -> None:
    print("\n观察：")
    for i, line in enumerate(lines, 1):
        print(f"  {i}. {line}")
