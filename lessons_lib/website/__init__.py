"""The website: the course as a static website (``lessons site``), built from the committed notebooks.

Uses :mod:`lessons_lib.course` (notebooks, assignments, glossary, fonts) and
:mod:`lessons_lib.exercises` (the course map).

- :mod:`~lessons_lib.website.site` — pages, exercises, links, search index; its template,
  stylesheet and search script in ``site_assets/`` (package data, see ``pyproject.toml``).
"""
