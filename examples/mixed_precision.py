"""Mixed precision training: float16 compute, float32 master weights, dynamic loss scaling,
unscale before clipping, skip non-finite steps. The same model trained in float32 beside it.

The whole step (casts, forward and backward in float16, unscaling, the finiteness check,
clipping, Adam, the scale update) is one compiled program.

Run: .venv/bin/python examples/mixed_precision.py
"""

import numpy as np

import irgrad as ig
from irgrad import layers, losses, optim
from irgrad.mixed_precision import DynamicLossScale, all_finite, cast_tree, select_tree

model = layers.MLP([16, 64, 64, 4])
opt = optim.adam(3e-3)
# A first scale far too large for float16 (2**24 times gradients of ~1e-2 overflows 65504):
# the first steps overflow and are skipped while the scale halves.
scaler = DynamicLossScale(initial_scale=2.0**24, period=20)


def loss_fn(params, x, labels):
    return losses.softmax_cross_entropy(model.apply(params, x), labels)


def mixed_step(params, opt_state, scale_state, x, labels):
    def scaled_loss(p):
        loss = loss_fn(cast_tree(p, ig.float16), ig.astype(x, ig.float16), labels)
        return scaler.scale(loss, scale_state), loss

    (_, loss), scaled_grads = ig.value_and_grad(scaled_loss, has_aux=True)(params)
    grads = scaler.unscale(scaled_grads, scale_state)
    finite = all_finite(grads)  # checked on the unscaled float32 gradients
    grads, norm = optim.clip_by_global_norm(grads, 1.0)  # clipped after unscaling
    new_params, new_state = opt.update(grads, opt_state, params)
    params = select_tree(finite, new_params, params)
    opt_state = select_tree(finite, new_state, opt_state)
    return params, opt_state, scaler.adjust(finite, scale_state), loss, finite


def float32_step(params, opt_state, x, labels):
    loss, grads = ig.value_and_grad(loss_fn)(params, x, labels)
    grads, _ = optim.clip_by_global_norm(grads, 1.0)
    params, opt_state = opt.update(grads, opt_state, params)
    return params, opt_state, loss


rng = np.random.default_rng(0)
x = rng.standard_normal((256, 16)).astype(np.float32)
labels = (x[:, 0] > 0).astype(np.int32) + 2 * (x[:, 1] + x[:, 2] > 0).astype(np.int32)

params = model.init(0)
mixed = (params, opt.init(params), scaler.init())
single = (params, opt.init(params))
step16, step32 = ig.jit(mixed_step), ig.jit(float32_step)
skipped = 0
for i in range(120):
    *mixed, loss16, finite = step16(*mixed, x, labels)
    *single, loss32 = step32(*single, x, labels)
    skipped += not bool(finite)
    if i % 20 == 0 or i == 119:
        scale = float(mixed[2]["scale"])
        print(f"step {i:3d}  float16 loss {float(loss16):.4f}  float32 loss {float(loss32):.4f}  scale 2^{np.log2(scale):.0f}")
print(f"skipped {skipped} steps whose scaled float16 gradients overflowed")
