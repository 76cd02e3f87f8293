#!/usr/bin/env bash
# The Alibaba GPU trace study: import the default trace, compare the three scoring strategies, plot.
# Usage: ./run.sh [TRACE_DIR]   (default: the copy of the trace next to the kubefit repository)
set -euo pipefail
cd "$(dirname "$0")"
TRACE=${1:-../../../shared/traces/alibaba-gpu-v2023}
mkdir -p out

# 1. The trace → a scenario: 1,213 GPU nodes and 8,152 pods in creation order (out/ is not committed).
kubefit import alibaba-gpu "$TRACE/openb_node_list_gpu_node.csv" "$TRACE/openb_pod_list_default.csv" \
  -o out/trace.json

# 2. The same workload under each strategy (cpu, memory, nvidia.com/gpu; see scheduler-config.yaml),
#    ties to the first node as in the golden runs of the real scheduler; table, JSON and the plot.
kubefit simulate -f scheduler-config.yaml -f out/trace.json --tie-break first \
  --compare LeastAllocated,MostAllocated,RequestedToCapacityRatio --plot allocation.png | tee out/comparison.txt
kubefit simulate -f scheduler-config.yaml -f out/trace.json --tie-break first \
  --compare LeastAllocated,MostAllocated,RequestedToCapacityRatio -o json > out/comparison.json

# The committed plot is shrunk to 64 colours (Pillow comes with matplotlib).
python -c "from PIL import Image; Image.open('allocation.png').convert('RGB').quantize(64, method=Image.Quantize.FASTOCTREE).save('allocation.png', optimize=True)"

# 3. The study's table beside the paper's figures (first-node ties, then the mean of 10 random seeds).
python study.py --trace-dir "$TRACE"
python study.py --trace-dir "$TRACE" --seeds 10
