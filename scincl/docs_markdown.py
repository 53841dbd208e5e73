"""Markdown tables as the docs quote them: the first table of a command's output, without its empty columns."""
from __future__ import annotations


def markdown_table(text: str) -> str:
    """The first Markdown table of ``text`` (its consecutive ``|`` lines), newline-terminated."""
    lines, started = [], False
    for line in text.splitlines():
        if line.startswith("|"):
            lines.append(line)
            started = True
        elif started:
            break
    if not lines:
        raise ValueError("no Markdown table in the text")
    return "\n".join(lines) + "\n"


def without_empty_columns(table: str) -> str:
    """A Markdown table without the columns whose every row is ``n/a`` (tasks the evaluation folder lacks)."""
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in table.strip().splitlines()]
    keep = [i for i in range(len(rows[0])) if any(row[i] != "n/a" for row in rows[2:])]
    return "\n".join("| " + " | ".join(row[i] for i in keep) + " |" for row in rows) + "\n"
