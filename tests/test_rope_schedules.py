"""Behaviour of rope/ beyond the official sample points: limits, monotonicity, batching, validation."""

from __future__ import annotations

import math

import pytest
import torch


@pytest.fixture(scope="module")
def rope():
    import host

    return host.pack_submodule("rope")


def _freqs(rope, t, method="yarn", scale=4.0, **kw):
    schedule = rope.PositionSchedule(method=method, **kw)
    return rope.axis_frequencies(schedule, 56, 10000.0, scale, 64, torch.as_tensor(t, dtype=torch.float64))


@pytest.mark.parametrize("method", ["yarn", "ntk", "pi"])
def test_t_zero_is_the_original_rope_and_finite(rope, method):
    freqs = _freqs(rope, 0.0, method)
    assert torch.isfinite(freqs).all()
    torch.testing.assert_close(freqs, rope.plain_frequencies(56, 10000.0), rtol=1e-15, atol=0)


@pytest.mark.parametrize("method", ["yarn", "ntk", "pi"])
def test_t_above_one_behaves_as_pure_noise(rope, method):
    assert torch.equal(_freqs(rope, 3.7, method), _freqs(rope, 1.0, method))
    assert torch.equal(_freqs(rope, -0.5, method), _freqs(rope, 0.0, method))


@pytest.mark.parametrize("method", ["yarn", "ntk", "pi"])
def test_dynamic_schedule_relaxes_monotonically_towards_the_original(rope, method):
    ts = torch.linspace(0, 1, 201, dtype=torch.float64)
    freqs = _freqs(rope, ts, method)  # batched t: (201, 28)
    base = rope.plain_frequencies(56, 10000.0)
    ratio = base / freqs  # >= 1: how much each pair is compressed
    assert (ratio >= 1 - 1e-12).all()
    assert (ratio[1:] >= ratio[:-1] - 1e-12).all()  # more noise, more compression, for every pair
    for i, t in enumerate(ts.tolist()[::40]):
        assert torch.equal(freqs[i * 40], _freqs(rope, t, method))  # batching is exact


def test_tiny_t_does_not_flip_back_to_interpolation(rope):
    # The official code inverts its ramp for t below ~0.007 and returns PI frequencies; we converge to RoPE.
    freqs = _freqs(rope, 1e-3)
    base = rope.plain_frequencies(56, 10000.0)
    assert torch.allclose(freqs, base, rtol=1e-12)


def test_static_and_off_and_unscaled(rope):
    assert torch.equal(_freqs(rope, 0.3, dynamic=False), _freqs(rope, 1.0, dynamic=False))
    base = rope.plain_frequencies(56, 10000.0)
    assert torch.equal(_freqs(rope, 0.5, method="off"), base)
    assert torch.equal(_freqs(rope, 1.0, scale=1.0), base)
    assert torch.equal(_freqs(rope, 1.0, scale=0.5), base)


def test_pi_and_ntk_limits_at_pure_noise(rope):
    base = rope.plain_frequencies(56, 10000.0)
    torch.testing.assert_close(_freqs(rope, 1.0, "pi", lambda_s=1.0), base / 4.0, rtol=1e-15, atol=0)
    torch.testing.assert_close(_freqs(rope, 1.0, "pi", dynamic=False), base / 4.0, rtol=1e-15, atol=0)
    ntk = _freqs(rope, 1.0, "ntk", dynamic=False)
    assert ntk[0] == base[0]  # NTK keeps the fastest pair
    assert ntk[-1].item() == pytest.approx(base[-1].item() / 4.0, rel=1e-12)  # and interpolates the slowest by s


def test_yarn_mscale(rope):
    assert rope.yarn_temperature(1.0) == 1.0
    assert rope.yarn_temperature(4.0) == pytest.approx(0.1 * math.log(4.0) + 1.0)


@pytest.mark.parametrize(("bad", "message"), [
    (dict(method="rope2"), "Unknown RoPE method 'rope2'"),
    (dict(lambda_t=-1.0), "lambda_t must be"),
    (dict(lambda_s=float("nan")), "lambda_s must be"),
    (dict(threshold_rule="square"), "Unknown threshold rule 'square'"),
])
def test_invalid_schedules_are_rejected_clearly(rope, bad, message):
    with pytest.raises(ValueError, match=message):
        rope.PositionSchedule(**bad)


def test_odd_axis_dimension_is_rejected(rope):
    with pytest.raises(ValueError, match="even, positive"):
        rope.plain_frequencies(7, 10000.0)


def test_pi_is_static_pi_at_pure_noise_whatever_lambda_s(rope):
    base = rope.plain_frequencies(56, 10000.0)
    for lambda_s in (0.5, 2.0, 4.0):
        torch.testing.assert_close(_freqs(rope, 1.0, "pi", lambda_s=lambda_s), base / 4.0, rtol=1e-15, atol=0)
    torch.testing.assert_close(_freqs(rope, 0.5, "pi"), base / 4.0 ** (0.5**2), rtol=1e-15, atol=0)


def _unclipped_yarn(t: float, scale: float, base_tokens: int, dim: int = 56, theta: float = 10000.0):
    """Official DyPE HEAD's Dy-YaRN written out from its formulas (flux/transformer_flux.py): the ramp's low end is
    clipped at 0 only, so it can pass its high end at tiny t."""
    k = t**2
    exps = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    plain, linear = 1 / theta**exps, 1 / (scale * theta**exps)
    ntk = 1 / (theta * scale ** (dim / (dim - 2))) ** exps

    def keep_fast(turns):  # 1 - linear ramp between the pair indices where wavelengths make `turns` turns
        idx = [dim * math.log(base_tokens / (r * k * 2 * math.pi)) / (2 * math.log(theta)) for r in turns]
        low, high = max(math.floor(idx[0]), 0), min(math.ceil(idx[1]), dim - 1, dim // 2)
        high = high + 0.001 if low == high else high
        ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
        return 1 - ramp.to(torch.float64)

    mask = keep_fast((1.25, 0.75))
    blended = linear * (1 - mask) + ntk * mask
    mask = keep_fast((16.0, 2.0))
    return blended * (1 - mask) + plain * mask


@pytest.mark.parametrize(("base_tokens", "inverts_up_to", "identical_above"),
                         [(64, 0.006768, 0.02422), (83, 0.007708, 0.02758)])
def test_ramp_clip_thresholds_documented_in_the_readme(rope, base_tokens, inverts_up_to, identical_above):
    scale = 256 / base_tokens  # 4096 px
    plain = rope.plain_frequencies(56, 10000.0)
    ours = rope.axis_frequencies(rope.PositionSchedule(), 56, 10000.0, scale, base_tokens,
                                 torch.tensor([inverts_up_to, identical_above + 1e-4], dtype=torch.float64))
    official = _unclipped_yarn(inverts_up_to, scale, base_tokens)
    torch.testing.assert_close(official, plain / scale, rtol=1e-15, atol=0)  # official: every pair PI again
    assert torch.equal(ours[0], plain)  # ours: the original RoPE
    for t in torch.linspace(identical_above + 1e-4, 1.0, 60).tolist():
        got = rope.axis_frequencies(rope.PositionSchedule(), 56, 10000.0, scale, base_tokens,
                                    torch.tensor(t, dtype=torch.float64))
        torch.testing.assert_close(got, _unclipped_yarn(t, scale, base_tokens), rtol=1e-15, atol=0)
    assert not torch.equal(_unclipped_yarn(identical_above - 1e-3, scale, base_tokens),
                           rope.axis_frequencies(rope.PositionSchedule(), 56, 10000.0, scale, base_tokens,
                                                 torch.tensor(identical_above - 1e-3, dtype=torch.float64)))
