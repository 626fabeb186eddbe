"""What makes the relative states distinct: a sample of the states the relative-state method
stored for sizes 1..N (NewReno, b = 2, W0 = 2, eps = eps_state = 1e-5), keyed again without
cwnd and ssthresh, without the times (events, RTO, link busy) and without both.
Usage: python validation/packet/relative_diversity.py P N (output: relative_diversity.txt)."""
import numpy as np, sys
from latency_model.params import TcpParams
from latency_model.model import packet as PM, _packet_relative as R, _packet_levels as LV
from latency_model.model._packet_flat import F_CWND, F_SSTH, F_RTO, F_BUSY, OFF_EVT, I_NEV, I_DONE
p=float(sys.argv[1]); N=int(sys.argv[2])
prm=TcpParams(p=p,b=2,w0=2)
consts=PM._flat_consts(prm, PM.PathConfig(), True, PM.binding_rwnd(prm,1e12))
st={}
R.solve(consts, prm, [n*prm.mss_bytes for n in range(1,N+1)], eps=1e-5, eps_state=1e-5, k_max=4, stats=st)
S=st["store"]; C,CF=consts(LV.BIG*prm.mss_bytes)
n=int(S.cnt[0]); I=np.zeros(S.ni,np.int64); F=np.zeros(S.nf)
rng=np.random.default_rng(0); idx=rng.choice(n, size=min(n,100000), replace=False)
keys={k:set() for k in ("full","no_cwnd_ssthresh","no_times","neither")}
with np.errstate(over="ignore"):
  for s in idx:
    R._load(C,S.IA,S.FA,S.PS,s,I,F)
    keys["full"].add(LV.state_hash(C,CF,I,F,I[2]))
    F2=F.copy(); F2[F_CWND]=0; F2[F_SSTH]=0
    keys["no_cwnd_ssthresh"].add(LV.state_hash(C,CF,I,F2,I[2]))
    F3=F.copy(); F3[F_RTO]=0; F3[F_BUSY]=0; F3[OFF_EVT:OFF_EVT+I[I_NEV]]=0
    keys["no_times"].add(LV.state_hash(C,CF,I,F3,I[2]))
    F3[F_CWND]=0; F3[F_SSTH]=0
    keys["neither"].add(LV.state_hash(C,CF,I,F3,I[2]))
print(f"p={p} sizes 1..{N}: {n} states stored; sample {len(idx)}:", {k:len(v) for k,v in keys.items()})
