"""Companion package of the course *attention, from dot products to syntax-biased Transformers*.

Modules are organised by concept (attention, plotting, notebooks, ...), never by lesson
number. Importing this package stays light: it does not import matplotlib, spaCy or
pandas; import the submodule you need (``from lessons_lib import attention``).
"""

__version__ = "0.1.0"
