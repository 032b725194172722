"""IR-level automatic differentiation: the `autodiff` pass and per-op derivative rules.

- transform.py: the `autodiff` pass (`AutodiffPass`); expands requests, caches derived functions;
- reverse.py / forward.py: build `@f_vjp` / `@f_jvp` from `@f`;
- activity.py: which values carry derivatives;
- builder.py: `RuleBuilder`, what rules emit IR with;
- registry.py: the rule tables and the `vjp_rule` / `jvp_rule` / `augment_rule` decorators;
- outline.py / loops.py: regions as functions; tapes and recomputation for loops;
- checkpoint_chain.py: the `checkpoint-chain` pass (O(sqrt n) saved values for a chain);
- rules/: one VJP and one JVP function per op, grouped by category.

See docs/autodiff.md.
"""
