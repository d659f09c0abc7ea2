"""How ``tests/_docs.py`` reads a document's fenced blocks (what test_docs_snippets runs):
each block with its line, language and text; a ``<!-- fragment -->`` comment just before
a block marks it, and nothing else does."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._docs import Block, blocks

DOCUMENT = """\
# Title

```python
x = 1
```

<!-- fragment -->

```python
await y
```

Text.
<!-- fragment -->
Not just before.

~~~sh
make demo
~~~

```
plain
```
"""


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, Block("doc.md", 3, "python", "x = 1\n", fragment=False)),
        (1, Block("doc.md", 9, "python", "await y\n", fragment=True)),
        (2, Block("doc.md", 17, "sh", "make demo\n", fragment=False)),
        (3, Block("doc.md", 21, "", "plain\n", fragment=False)),
    ],
)
def test_blocks_of_a_document(tmp_path: Path, index: int, expected: Block) -> None:
    document = tmp_path / "doc.md"
    document.write_text(DOCUMENT, encoding="utf-8")
    found = blocks([document], tmp_path)
    assert len(found) == 4
    assert found[index] == expected
    assert found[index].key == ("doc.md", expected.code.strip())
