"""The lessons' helpers: what a notebook imports to set itself up and draw, and the checks of the lessons themselves.

The grader (:mod:`lessons_lib.grader`) and the website (:mod:`lessons_lib.website`) have rooms of
their own above this one.

- :mod:`~lessons_lib.course.reproducibility` — a notebook's setup: seeds (through :mod:`lessons_lib.seeding`), threads, print options.
- :mod:`~lessons_lib.course.plotting` — the CJK font and attention heatmaps;
  :mod:`~lessons_lib.course.fonts` — the packaged CJK font file and subsets of it.
- :mod:`~lessons_lib.course.notebooks` — executing notebooks headless (the only source of
  committed outputs) and the fingerprint that proves it.
- :mod:`~lessons_lib.course.assignments` — student versions, nbgrader layout.
- :mod:`~lessons_lib.course.envcheck` — is this machine ready for the course?
- :mod:`~lessons_lib.course.diagrams` — diagrams built from the lessons' own sizes (Q/K/V flow,
  multi-head split and merge, the encoder block, the syntax-bias path).
- :mod:`~lessons_lib.course.prose` — every number of a lesson's prose is printed by it or cited.
- :mod:`~lessons_lib.course.glossary` — the course's glossary and the check for variant spellings.
"""
