"""The course's machinery around the lessons.

- :mod:`~lessons_lib.course.reproducibility` — a notebook's setup: seeds (through :mod:`lessons_lib.seeding`), threads, print options.
- :mod:`~lessons_lib.course.plotting` — the CJK font and attention heatmaps;
  :mod:`~lessons_lib.course.fonts` — the packaged CJK font file and subsets of it.
- :mod:`~lessons_lib.course.notebooks` — executing notebooks headless (the only source of
  committed outputs) and the fingerprint that proves it.
- :mod:`~lessons_lib.course.assignments` — student versions, nbgrader layout.
- :mod:`~lessons_lib.course.grading` — grading submissions: sandboxed execution, scores
  decided on the grader's side; :mod:`~lessons_lib.course.sandbox` — the isolation levels
  and limits; :mod:`~lessons_lib.course.grading_worker` — what runs inside the sandbox.
- :mod:`~lessons_lib.course.envcheck` — is this machine ready for the course?
- :mod:`~lessons_lib.course.diagrams` — diagrams built from the lessons' own sizes (Q/K/V flow,
  multi-head split and merge, the encoder block, the syntax-bias path).
- :mod:`~lessons_lib.course.prose` — every number of a lesson's prose is printed by it or cited.
- :mod:`~lessons_lib.course.glossary` — the course's glossary and the check for variant spellings.
- :mod:`~lessons_lib.course.site` — the course as a static website, from the committed notebooks.
"""
