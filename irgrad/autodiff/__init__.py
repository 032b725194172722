"""IR-level automatic differentiation: the `autodiff` pass and per-op derivative rules.

Layered top down: a module imports only modules listed below it (none imports one that imports it back):
- autodiff.py: the `autodiff` pass (`AutodiffPass`): loads the rules, has the Deriver expand requests;
- checkpoint_chain.py: the `checkpoint-chain` pass (O(sqrt n) saved values for a chain);
- rules/: one VJP and one JVP function per op, grouped by category; `load_rules` imports them all;
- deriver.py: `Deriver`, which expands requests and builds, places and caches derived functions;
- reverse.py / forward.py / batching.py: build `@f_vjp` / `@f_jvp` / `@f_batch` from `@f`;
- support.py: the checks and errors the reverse and forward builders share;
- adjoint_locations.py: the location that marks an op of a reverse sweep as the adjoint of a primal op;
- loops.py / outline.py: tapes and recomputation for loops; regions as functions;
- activity.py: which values carry derivatives;
- builder.py: `RuleBuilder`, what rules emit IR with;
- protocol.py: `DeriverProtocol`, how everything below deriver.py calls back into the Deriver it is handed;
- registry.py: the rule tables and the `vjp_rule` / `jvp_rule` / `augment_rule` / `batch_rule` decorators;
- errors.py: `AutodiffError`, `RuleContractError`.

See docs/autodiff.md.
"""
