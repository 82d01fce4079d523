#!/usr/bin/env bash
# `locus serve --node K`'s argument errors, which need no RDMA device (they
# are found from the scenario and the cluster file before any is opened):
# each a clear error naming the problem, exit 1, never an abort. The
# deployments themselves are tests/verbs/node_processes_test.cc (verbs tier).
set -uo pipefail
locus=$1 root=$2
. "$(dirname "$0")/expect_error.sh"
if "$locus" serve --help 2>&1 | grep -q -- "--node" && ! "$locus" serve "$root/scenarios/quickstart.toml" \
  --config /dev/null 2>&1 | grep -q "without the verbs backend"; then :; else
  echo "locus built without the verbs backend: nothing to check"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
nam="$root/tests/verbs/scenarios/nam.toml"    # two memory servers
cell="$root/tests/verbs/scenarios/cell.toml"  # two servers
printf '[[server]]\naddress = "127.0.0.1"\nport = 7471\n\n[[server]]\naddress = "127.0.0.1"\nport = 7472\n' >"$dir/two.toml"
printf '[[server]]\naddress = "127.0.0.1"\nport = 7471\n' >"$dir/one.toml"
printf '[[server]]\naddress = "127.0.0.1"\nport = 7471\n\n[[server]]\naddress = "127.0.0.1"\nport = 0\n' >"$dir/anyport.toml"
expect_error "--node 2: .*platform.servers = 2, so nodes 0 to 1" serve "$nam" --config "$dir/two.toml" --node 2
expect_error "lists 1 \[\[server\]\] entries" serve "$nam" --config "$dir/one.toml" --node 0
expect_error "entry 1 (127.0.0.1:0) has port 0" serve "$nam" --config "$dir/anyport.toml" --node 0
expect_error "--with-clients needs --node" serve "$nam" --config "$dir/two.toml" --with-clients
expect_error "cell: its clients learn every server's regions" serve "$cell" --config "$dir/two.toml" --node 0
expect_error "--node" serve "$nam" --config "$dir/two.toml" --node -1
[ $fail = 0 ] && echo "locus serve --node: every bad argument refused clearly"
exit $fail
