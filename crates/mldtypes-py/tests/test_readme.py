"""Every ```python block of the repository's README.md runs as written, and the outputs its
comments show are what Python prints.

Each block runs in a fresh namespace, in a temporary working directory that holds a small
``model.safetensors`` (two float32 tensors) for the checkpoint examples. An expression
statement followed by a comment on the same line is checked: the comment, or its part before
the first ``": "``, ``", "``, ``" ("`` or ``"; "``, must equal the value's ``repr()`` or
``str()`` (whitespace ignored, ``...`` matching anything), unless that part is prose (words
separated by spaces). A statement that raises must be followed by a comment naming the
exception class (on its line or the next). Blocks whose first line is ``# doctest: skip``,
and blocks importing torch, jax or ray when those are not installed, are skipped.
"""

import ast
import importlib.util
import io
import json
import re
import struct
import tokenize
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[3] / "README.md"
OPTIONAL = ("torch", "jax", "ray")


def _blocks():
    if not README.is_file():
        return []
    lines = README.read_text(encoding="utf-8").splitlines()
    out, start = [], None
    for i, line in enumerate(lines):
        if start is None and line.strip() == "```python":
            start = i + 1
        elif start is not None and line.strip() == "```":
            out.append((start + 1, "\n".join(lines[start:i])))
            start = None
    return out


BLOCKS = _blocks()


def _write_model(path):
    """A safetensors file: 8-byte little-endian header length, JSON header, tensor bytes."""
    w = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    b = np.array([0.5, -0.25, 1e-3, 7.0], np.float32)
    header = {
        "weight": {"dtype": "F32", "shape": list(w.shape), "data_offsets": [0, w.nbytes]},
        "bias": {"dtype": "F32", "shape": list(b.shape),
                 "data_offsets": [w.nbytes, w.nbytes + b.nbytes]},
    }
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + w.tobytes() + b.tobytes())


_SEPARATORS = (": ", ", ", " (", "; ")


def _squash(s):
    return re.sub(r"\s+", "", s)


def _renderings(value):
    out = [repr(value), str(value)]
    if isinstance(value, tuple):
        out.append(", ".join(str(v) for v in value))
    return [_squash(r) for r in out]


def _matches(claim, renderings):
    pattern = ".*".join(re.escape(part) for part in _squash(claim).split("..."))
    return any(re.fullmatch(pattern, r) for r in renderings)


def _claims(comment):
    """The comment itself and each prefix that ends before a separator."""
    out = [comment]
    for i in range(len(comment)):
        if any(comment.startswith(sep, i) for sep in _SEPARATORS):
            out.append(comment[:i])
    return out


def _is_prose(text):
    text = text.strip()
    return bool(re.fullmatch(r"[A-Za-z][\w\-]*( [\w\-'`./]+)+", text)
                or re.fullmatch(r"[A-Za-z]+(-[A-Za-z]+)+", text))


class _Checker:
    def __init__(self, source):
        self.lines = source.splitlines()
        self.checked = 0
        self.comments = {}
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        for tok in tokens:
            if tok.type == tokenize.COMMENT and tok.line[:tok.start[1]].strip():
                self.comments[tok.start[0]] = tok.string[1:].strip()

    def comment_at(self, lineno):
        """The comment that ends line `lineno` after code (tokenized, so never a '#' in a
        string), or None."""
        return self.comments.get(lineno)

    def following_comments(self, lineno):
        out = []
        for line in self.lines[lineno:]:
            if line.lstrip().startswith("#"):
                out.append(line.lstrip()[1:].strip())
            else:
                break
        return out

    def __call__(self, thunk, lineno):
        comment = self.comment_at(lineno)
        try:
            value = thunk()
        except Exception as e:  # noqa: BLE001 (the README shows which)
            shown = " ".join(filter(None, [comment or ""] + self.following_comments(lineno)))
            name = type(e).__name__
            assert name in shown, (
                f"README line {lineno}: raised {name}: {e}, but the README shows {shown!r}")
            self.checked += 1
            return None
        if comment is None:
            return value
        renderings = _renderings(value)
        for claim in _claims(comment):
            if _matches(claim, renderings):
                self.checked += 1
                return value
        head = comment
        for i in range(len(comment)):
            if any(comment.startswith(sep, i) for sep in _SEPARATORS):
                head = comment[:i]
                break
        assert _is_prose(head), (
            f"README line {lineno}: shows {comment!r}, Python prints {repr(value)!r}")
        return value


class _Wrap(ast.NodeTransformer):
    """Expression statements become ``__check__(lambda: expr, lineno)``."""

    def visit_Expr(self, node):
        call = ast.Call(
            func=ast.Name("__check__", ast.Load()),
            args=[ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                kw_defaults=[], defaults=[]),
                             body=node.value),
                  ast.Constant(node.lineno)],
            keywords=[])
        return ast.copy_location(ast.Expr(call), node)


def test_readme_has_python_blocks():
    if not README.is_file():
        pytest.skip("README.md is not next to this source tree")
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("line,source", BLOCKS, ids=[f"line{n}" for n, _ in BLOCKS])
def test_readme_block(line, source, tmp_path, monkeypatch):
    if source.lstrip().startswith("# doctest: skip"):
        pytest.skip("marked # doctest: skip")
    tree = ast.parse(source)
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top in OPTIONAL and importlib.util.find_spec(top) is None:
                pytest.skip(f"needs {top}")
    _write_model(tmp_path / "model.safetensors")
    monkeypatch.chdir(tmp_path)
    tree = ast.fix_missing_locations(_Wrap().visit(tree))
    checker = _Checker(source)
    import mldtypes

    before = mldtypes.get_numpy_promotion()
    try:
        exec(compile(tree, f"README.md:{line}", "exec"), {"__check__": checker})
    finally:
        mldtypes.set_numpy_promotion(before)
        mldtypes.config.update("jax_enable_x64", False)
    assert checker.checked > 0
