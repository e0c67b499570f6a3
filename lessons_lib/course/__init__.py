"""The course's machinery around the lessons.

- :mod:`~lessons_lib.course.reproducibility` — seeds, threads, print options.
- :mod:`~lessons_lib.course.plotting` — the CJK font and attention heatmaps.
- :mod:`~lessons_lib.course.notebooks` — executing notebooks headless (the only source of
  committed outputs) and the fingerprint that proves it.
- :mod:`~lessons_lib.course.assignments` — student versions, nbgrader layout, grading.
- :mod:`~lessons_lib.course.envcheck` — is this machine ready for the course?
"""
