"""The filters a config entry names, one module each, registered where defined (``@register("name")``).

Each module holds one filter: its typed options (a :class:`pipeline.filter.options.FilterOptions` dataclass) and
its rules, readable against the paper or the library it reproduces (docs/stages.md, The filter stage).
"""
