"""The matrix engine: master configs -> sweep rows -> changelog plan.

Module map (one responsibility each):

* `model`   - pydantic schemas: master-config entries, runner file, changelog
              sweep entries, normalised output rows and the plan document.
* `catalog` - parse and validate master configs + runner file (bytes in),
              key resolution, located `Violation`s, the parse cache.
* `expand`  - one generator invocation: rows for some keys plus eval marking.
* `plan`    - the changelog processor: appended entries -> plan document.
* `render`  - text / markdown views of rows and plans.
* `sources` - thin adapter that reads the inputs from git (the only I/O).

The contract is docs/matrix.md; deliberate differences from the reference are in
docs/matrix-differences.md.
"""
