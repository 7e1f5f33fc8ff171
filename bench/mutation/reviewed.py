"""Cases read by hand after no mutation made them fail: why each is right, and why the generic
mutations cannot reach it.

The list's ``why`` is classified from what the mutations did (:data:`bench.mutation.run.WHY`); it
says how a case behaved, not whether the case is sound. Each entry here is the result of reading
the case against the text it cites: the case can fail by its own text (a broker that did what it
forbids would fail it), and what that broker would have to send is something no generic mutation
of a correct broker's frames produces. A case found defective is fixed in the catalog instead,
never listed here. The report writes the entry as ``reviewed`` beside the case while it is not
shown able to fail.
"""
from __future__ import annotations

REVIEWED: dict[str, str] = {
}
