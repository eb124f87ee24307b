"""cdlab._checks: the one home of the package's argument rules and their wording."""
import numpy as np
import pytest

from cdlab._checks import check_choice, check_int, check_real


@pytest.mark.parametrize("value, expected", [(3, 3), (np.int64(4), 4), (1e4, 10000), (np.float32(2.0), 2),
                                             (np.array(5), 5)])
def test_check_int_accepts_integral_numbers(value, expected):
    out = check_int("n", value)
    assert out == expected and type(out) is int


@pytest.mark.parametrize("value, message", [
    (True, "n must be an integer ≥ 1, got True"), ("3", "n must be an integer ≥ 1, got '3'"),
    (None, "n must be an integer ≥ 1, got None"), (2.5, "n must be an integer ≥ 1, got 2.5"),
    (float("nan"), "n must be an integer ≥ 1, got nan"), (float("inf"), "n must be an integer ≥ 1, got inf"),
    (0, "n must be an integer ≥ 1, got 0")])
def test_check_int_names_the_argument_and_the_rule(value, message):
    with pytest.raises(ValueError) as info:
        check_int("n", value)
    assert str(info.value) == message


def test_check_real_ranges_and_wording():
    assert check_real("lam", np.float32(0.5), low=0.0) == 0.5 and check_real("lam", np.array(2)) == 2.0
    assert check_real("max_bytes", float("inf"), low=0.0, low_open=True, finite=False) == float("inf")
    cases = [(dict(value="0.1"), "lam must be a real number, got '0.1'"),
             (dict(value=True), "lam must be a real number, got True"),
             (dict(value=np.array([0.1])), "lam must be a real number, got array([0.1])"),
             (dict(value=-1, low=0.0), "lam must be finite and ≥ 0, got -1.0"),
             (dict(value=0.0, low=0.0, low_open=True), "lam must be finite and > 0, got 0.0"),
             (dict(value=float("inf"), low=0.0), "lam must be finite and ≥ 0, got inf"),
             (dict(value=1.0, low=0.0, high=1.0, low_open=True, high_open=True),
              "lam must be finite and in (0, 1), got 1.0"),
             (dict(value=float("nan"), finite=False), "lam must be a number, got nan"),
             (dict(value=float("nan"), low=0.0, finite=False), "lam must be ≥ 0, got nan")]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as info:
            check_real("lam", **kwargs)
        assert str(info.value) == message


def test_check_choice():
    assert check_choice("kind", "a", ("a", "b")) == "a"
    with pytest.raises(ValueError, match=r"unknown kind 'c'; choose one of \['a', 'b'\]"):
        check_choice("kind", "c", ("b", "a"))
