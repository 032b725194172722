"""A small CNN (conv2d, max_pool2d, linear) on 8x8 images: traced IR and its gradient.

Run: .venv/bin/python examples/cnn.py
"""

import numpy as np

import irgrad as ig
from irgrad import layers, losses

model = layers.Sequential([
    layers.Conv2d(1, 4, kernel_size=3, padding=1),
    layers.ReLU(),
    layers.MaxPool2d(2),
    layers.Flatten(),
    layers.Linear(4 * 4 * 4, 10),
])
params = model.init(0)


def loss_fn(params, images, labels):
    return losses.softmax_cross_entropy(model.apply(params, images), labels)


rng = np.random.default_rng(0)
images = rng.standard_normal((8, 1, 8, 8)).astype(np.float32)
labels = rng.integers(0, 10, 8).astype(np.int32)

print(ig.trace(loss_fn, params, images, labels))
loss, grads = ig.value_and_grad(loss_fn)(params, images, labels)
print("loss", float(loss))
print("gradient shapes", ig.tree_map(lambda g: g.shape, grads))
