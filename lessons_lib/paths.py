"""Where the course's own files live (the repository checkout the package is installed from)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"

# The shipped LCQMC-format sample (train.tsv, dev.tsv, test.tsv) written for the course.
LCQMC_SAMPLE_DIR = DATA_DIR / "lcqmc_sample"
# The course's Chinese→English translation corpus with gold trees (`lessons build-translation-corpus`).
TRANSLATION_CORPUS_DIR = DATA_DIR / "translation_corpus"
# Measured results shipped with the course (numbers only), read by the lessons at run time.
RESULTS_DIR = REPO_ROOT / "results"
# Results of `lessons experiment` on the real LCQMC (numbers only, no text), read by lessons 08 and 10.
LCQMC_RESULTS_DIR = RESULTS_DIR / "lcqmc"
# The translation positive control's runs (lesson 12), one folder per arm.
TRANSLATION_CONTROL_DIR = RESULTS_DIR / "translation_control"
TRANSLATION_RESULTS_DIR = RESULTS_DIR / "translation"
TRANSLATION_DESIGN_FILE = TRANSLATION_RESULTS_DIR / "design.json"
LCQMC_BASELINES_FILE = LCQMC_RESULTS_DIR / "baselines" / "majority_and_jaccard.json"
# `lessons train` runs on the whole real LCQMC: one folder per run holding its metrics.json (lesson 06).
LCQMC_TRAINING_RUNS_DIR = LCQMC_RESULTS_DIR / "train"
# Environment variable naming a directory with the real LCQMC files.
LCQMC_ENV_VAR = "LCQMC_DIR"
# The course's own small spaCy Chinese parser (a spaCy pipeline folder).
PARSER_MODEL_DIR = DATA_DIR / "parser" / "zh_course_parser"
# A smaller, faster configuration of it (narrower, shallower; see data/parser/README.md).
SMALL_PARSER_MODEL_DIR = DATA_DIR / "parser" / "zh_course_parser_small"

# Environment variable naming the Tatoeba Chinese–English file (cmn.txt), kept outside the repository.
TATOEBA_ENV_VAR = "TATOEBA_FILE"
