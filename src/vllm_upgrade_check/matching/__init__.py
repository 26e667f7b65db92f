"""The matching stage: rules applied to facts within a release window (pure, no I/O), the
built-in checks that are code, and the user's filters (suppressions, baselines)."""
