"""irgrad-opt --verify-each=false (mlir-opt's switch): the input verified, no pass's output."""

from __future__ import annotations

import pytest

from irgrad.driver import opt

GOOD = """
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %e = nn.exp %x : tensor<3xf32>
  %n = nn.neg %e : tensor<3xf32>
  func.return %n : tensor<3xf32>
}
"""


def _count_verifications(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = opt.verify_module
    monkeypatch.setattr(opt, "verify_module", lambda *args, **kw: calls.append(1) or real(*args, **kw))
    return calls


@pytest.mark.parametrize("flag,expected", [([], 3), (["--verify-each=true"], 3), (["--verify-each=false"], 1)])
def test_verifications(tmp_path, monkeypatch, capsys, flag, expected):  # type: ignore[no-untyped-def]
    path = tmp_path / "in.mlir"
    path.write_text(GOOD)
    calls = _count_verifications(monkeypatch)
    assert opt.main(["-p", "canonicalize,cse", *flag, str(path)]) == 0
    assert len(calls) == expected  # the input, then after each of the two passes
    assert "nn.neg" in capsys.readouterr().out


def test_the_input_is_still_verified(tmp_path, capsys):  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.mlir"
    path.write_text('func.func @f(%x: tensor<3xf32>) -> tensor<4xf32> {\n  func.return %x : tensor<3xf32>\n}\n')
    assert opt.main(["-p", "cse", "--verify-each=false", str(path)]) == 1
    assert "error" in capsys.readouterr().err
