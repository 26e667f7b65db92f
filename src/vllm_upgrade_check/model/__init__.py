"""The records of the pipeline, each in the module of its stage's output:

- :mod:`.facts`: what scanners saw (facts, their spans, skipped files);
- :mod:`.pack`: rule packs as a run holds them (plain records, :mod:`.records`), and
  :mod:`.pack_schema`: the pydantic models that validate them and emit their JSON Schema;
- :mod:`.findings`: rules applied to facts, and the report of a run;
- :mod:`.options`: what a run is asked to do;
- :mod:`.environment`: the Python environment and host a run checks;
- :mod:`.fixes`: edits and what a ``fix`` run did;
- :mod:`.plan`: an upgrade plan.

Nothing is imported here, so that a module needing only facts does not load pydantic.
"""
