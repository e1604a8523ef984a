"""Frequencies of a grouping: the shared state of the grouping analyzers.

Uniqueness, Distinctness, UniqueValueRatio, CountDistinct, Entropy, MutualInformation,
DuplicateRowCount and Histogram compute their metrics from the row counts per group of
one grouping (``spec.FrequencySpec``); analyzers with equal specs share one pass and one
stored state. The package, one concept per module:

* ``spec``: what to group (columns, ``where``, histogram mode and binning); pure data;
* ``states``: the state, ``ExactFrequencies`` (every group) or ``SampledFrequencies`` (a
  bounded bottom-k sample of key hashes with exact counts, and the top keys), with its
  merge and its bytes; ``tables`` (exact Arrow tables), ``sample`` (the sample and top
  structures) and ``sizing`` (the bound) are its parts;
* ``migration``: format-v1 tuple-sketch bytes converted on read into the sample form;
* ``estimators``: metric estimates (with error bounds) from the counts held;
* ``query``: the Spark side (per-row keys, grouped counts, the one bounded query), with
  ``spark_settings`` (the session settings that make it one job);
* ``grouped`` and ``arrow``: grouped counts to a state, shared by the fused Spark path
  and the small-batch Arrow path (so both give equal states).

Dependencies point one way: spec, sizing, tables, sample, estimators <- migration <-
states <- grouped <- query, arrow.
"""

from streamdq.analyzers.frequency.spec import NULL_VALUE, FrequencySpec
from streamdq.analyzers.frequency.states import ExactFrequencies, FrequencyState, SampledFrequencies

__all__ = ["NULL_VALUE", "ExactFrequencies", "FrequencySpec", "FrequencyState", "SampledFrequencies"]
