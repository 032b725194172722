"""IR-level automatic differentiation: the `autodiff` pass and per-op derivative rules.

- transform.py: the `autodiff` pass (`AutodiffPass`); expands requests, caches derived functions;
- reverse.py / forward.py: build `@f_vjp` / `@f_jvp` from `@f`;
- activity.py: which values carry derivatives;
- builder.py: `RuleBuilder`, what rules emit IR with;
- registry.py: the rule tables and the `vjp_rule` / `jvp_rule` decorators;
- rules/: one VJP and one JVP function per op, grouped by category.

See docs/autodiff.md.
"""
