"""Catalog self-test by mutation: can each case fail?

A conformance case that passes against a correct broker proves something only if it would fail
against a wrong one. This package puts a perturbing proxy between the suite and a correct
broker (:mod:`.proxy`), applies generic mutations to the broker's frames (:mod:`.mutations`),
chosen from the frames each case received (:mod:`.plan`), runs the catalog under them
(:mod:`.run`) and writes the list of cases no mutation made fail, with why (:mod:`.report`).

Test and bench tooling only: nothing in the product imports it, and it must never be used to
make a conformance case pass.

    python -m bench.mutation URL --protocol 0-9-1|1.0 [--case GLOB] [--mutations N] [--jobs N] --out FILE
"""
