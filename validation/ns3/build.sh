#!/usr/bin/env bash
# Build the ns-3 reference program against Debian's libns3-dev (ns-3.37).
# Not needed by the test suite.  Usage: bash validation/ns3/build.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! dpkg -s libns3-dev >/dev/null 2>&1 || [ ! -f /usr/include/ns3/tcp-socket-base.h ]; then
    echo "libns3-dev is not installed (apt-get install -y libns3-dev); nothing built." >&2
    exit 0
fi
ver="$(dpkg-query -W -f='${Version}' libns3-dev)"
echo "building against libns3-dev ${ver}"
mkdir -p "${here}/build"
nice -n 10 g++ -std=c++17 -O2 -w -I/usr/include \
    -o "${here}/build/ns3_reference" "${here}/ns3_reference.cc" \
    -lns3-applications -lns3-internet -lns3-point-to-point -lns3-traffic-control \
    -lns3-bridge -lns3-network -lns3-stats -lns3-core
echo "built ${here}/build/ns3_reference"
