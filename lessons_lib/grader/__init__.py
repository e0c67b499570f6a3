"""The grader: grading learners' submitted notebooks in a sandbox, scores decided on the grader's side.

Its own room because it is security code: it runs code it does not trust. Uses
:mod:`lessons_lib.course` (notebooks, assignments) and :mod:`lessons_lib.exercises` (the checkers).

- :mod:`~lessons_lib.grader.grading` — grading submissions: sandboxed execution, scores
  decided on the grader's side.
- :mod:`~lessons_lib.grader.sandbox` — the isolation levels and limits.
- :mod:`~lessons_lib.grader.grading_worker` — what runs inside the sandbox.
"""
