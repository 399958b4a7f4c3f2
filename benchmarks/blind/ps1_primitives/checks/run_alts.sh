#!/bin/bash
# harness on each alt/short for its own task (x32), and correct in x64 mode
cd "$(dirname "$0")/.."
run() { nice -n 10 /work/sv/.venv/bin/python checks/harness.py $1.ipynb --tasks $2 $3 > checks/out/$1$3.txt 2>&1; }
export -f run
cat <<L | xargs -P 3 -L1 bash -c 'run $0 $1 $2'
alt_01 impl
alt_02 abstract_eval
alt_03 lowering
alt_04 jvp
alt_05 transpose
alt_08 transpose
correct impl,abstract_eval,lowering,jvp,transpose --x64
alt_06 batch
alt_07 batch
alt_09 batch
short_01 lowering
short_06 abstract_eval
short_03 jvp
L
