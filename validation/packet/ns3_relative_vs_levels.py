"""The relative-state method beside the level DP on the ns3 sender (ns-3.37 profile timers),
sizes 5-40 packets; output: ns3_relative_vs_levels.txt (2026-11-28, run with
LATENCY_MODEL_MEMORY_LIMIT=4000000000: the second cell was refused at that limit)."""
import time
from latency_model.params import TcpParams, apply_variant
from latency_model.model import packet as PM
path = PM.PathConfig(sender="ns3", quick_acks=1, clock_granularity_s=0.001)
for v,b,w0,p in [("newreno",2,2,0.05),("lt",1,2,0.2),("newreno",1,4,0.1),("lt",2,10,0.1)]:
    prm=apply_variant(TcpParams(p=p,b=b,w0=w0),v)
    sizes=[5,10,20,40]
    t=time.process_time(); r=PM.expected_latency(prm,size_packets=sizes,path=path,method="relative"); tr=time.process_time()-t
    t=time.process_time(); l=PM.expected_latency(prm,size_packets=sizes,path=path,method="levels"); tl=time.process_time()-t
    print(f"ns3 {v} b={b} W0={w0} p={p}: relative {tr:.1f}s levels {tl:.1f}s;", " ".join(f"{n}:{x.expected_latency_s:.4f}/{y.expected_latency_s:.4f}({100*(x.expected_latency_s/y.expected_latency_s-1):+.2f}%)" for n,x,y in zip(sizes,r,l)), flush=True)
