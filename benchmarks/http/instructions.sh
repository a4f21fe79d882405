#!/bin/bash
# Instructions per request of an HTTP server, counted by callgrind: a measure that does
# not move with the load of a shared machine (requests/s swing by 2x there). The server
# runs under valgrind pinned to core 0 with instrumentation off; WARMUP requests let V8
# optimise; then instrumentation is switched on (vgdb) for MEASURE requests from 20
# keep-alive connections (fixed-count.mjs, core 1), and the counters are dumped. Prints
# instructions per request of all threads (GC workers included), of the main thread, and of
# all threads without V8's garbage collector and optimising compiler.
#
#   benchmarks/http/instructions.sh NAME PORT WARMUP MEASURE -- server command...
#   benchmarks/http/instructions.sh scour 9101 5000 40000 -- node dist/config/cli.js serve
#   benchmarks/http/instructions.sh ideal 9102 5000 40000 -- node benchmarks/http/servers/ideal-uws.mjs
#
# Needs valgrind (apt-get install valgrind). Output files go to $TMPDIR/scour-callgrind/;
# add --perf-basic-prof to the node command to name JIT-compiled functions in them
# (addresses resolve through /tmp/perf-<pid>.map). A major GC that falls inside the
# measured window adds up to 20,000 instructions per request to the all-threads figure:
# compare the figures without GC and JIT compiler, or repeat.
set -u
name=$1; port=$2; warm=$3; meas=$4; shift 5
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${TMPDIR:-/tmp}/scour-callgrind
mkdir -p "$dir"
out=$dir/$name
rm -f "$out".*
# vgdb finds the server through files named after USER and HOST; set both for valgrind and vgdb alike.
export USER=${USER:-root} HOST=127.0.0.1
cd "$root"
PORT=$port SCOUR_TOOLS_RATE_LIMIT=1000000000 LOG_LEVEL=warn SCOUR_DATA_DIR="$dir/data-$name" SCOUR_HTTP_ADAPTER=uws \
  taskset -c 0 valgrind --vgdb-prefix="$dir/vgdb" --tool=callgrind --separate-threads=yes --instr-atstart=no \
  --smc-check=all-non-file --callgrind-out-file="$out.%p" "$@" > "$out.log" 2>&1 &
vpid=$!
for _ in $(seq 1 600); do
  curl -s -o /dev/null -X POST -H 'content-type: application/json' -d '{}' "http://127.0.0.1:$port/v1/tools/uuid-generator" && break
  sleep 0.5
done
taskset -c 1 node "$here/fixed-count.mjs" "$port" "$warm" 20 > /dev/null
vgdb --vgdb-prefix="$dir/vgdb" --pid=$vpid instrumentation on > /dev/null 2>&1
r=$(taskset -c 1 node "$here/fixed-count.mjs" "$port" "$meas" 20)
vgdb --vgdb-prefix="$dir/vgdb" --pid=$vpid dump > /dev/null 2>&1
vgdb --vgdb-prefix="$dir/vgdb" --pid=$vpid instrumentation off > /dev/null 2>&1
kill $vpid
wait $vpid 2> /dev/null
all=$(grep -h '^totals:' "$out".*.1-* | awk '{s += $2} END {printf "%d", s}')
main=$(grep -h '^totals:' "$out".*.1-01 | awk '{s += $2} END {printf "%d", s}')
# V8's own work, whose timing does not follow the requests: garbage collection (a major GC in the
# window adds thousands per request) and the optimising compiler. The rest repeats within about 1,500.
gcjit='Scaveng|Marking|Marker|Sweep|heap::base|cppgc|Evacuat|MemoryAllocator|GlobalHandles::|RememberedSet|SlotSet|TypedSlot|MinorMC|Heap::|LocalHeap|Worklist|ActiveSystemPages|MemoryChunk|PagedSpace|FreeList|ObjectStartBitmap|BodyDescriptor|SizeFromMap|ShouldVisit|IteratePointers|popcount|Compaction|ArrayBufferSweeper|RecordSlot|MarkCompact|MarkBit|CodeFlush|WeakObjects|Ephemeron|IterateObjectCache|Migrat|RootVisitor|RootScavenge|RootMarking|StringTableCleaner|Visitor::Visit|compiler::|Compiler|Turbofan|Maglev|Parser|Bytecode|Deoptimizer|Zone|OptimizedCompilationJob|Pipeline|Graph|Scheduler|RegisterAllocat|InstructionSelector|LiveRange|CodeGenerator|Assembler|JSHeapBroker|SourcePosition'
v8own=$(for f in "$out".*.1-*; do callgrind_annotate --inclusive=no --threshold=100 "$f"; done |
  awk -v re="$gcjit" '/^ *[0-9,]+ \(/ && !/PROGRAM TOTALS/ && $0 ~ re { gsub(",", "", $1); s += $1 } END {printf "%d", s}')
echo "$name $r instructions/request: all threads $((all / meas)), main thread $((main / meas)), without GC and JIT compiler $(((all - v8own) / meas))"
