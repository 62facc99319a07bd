#!/bin/bash
# A bash script waits for a pipeline in a command substitution: `sort` sorts
# a file (all of it before it writes a line) and `head -n 1` takes the
# first line.  bash reads the substitution's pipe; head reads sort's; sort
# computes.  Prints {"pid", "tid"} before the substitution.
#   bash cmdsubst_pipeline.sh FILE
echo "{\"pid\": $$, \"tid\": $$}"
first=$(LC_ALL=C sort -n --parallel=1 -S 1G "$1" | head -n 1)
echo "{\"first\": \"$first\"}"
