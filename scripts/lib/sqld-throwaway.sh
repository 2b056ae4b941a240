# Sourced by scripts that run a throwaway sqld (demo.sh, examples.sh).
# Expects: $sqld (the binary, from scripts/sqld.sh), $tmp (a scratch
# directory), die (prints and exits). start_sqld sets $pid and $port;
# stop_sqld, for the caller's EXIT trap, stops $pid and removes $tmp.

# healthy PORT: GET /health answers 200 (plain bash, no curl needed).
# shellcheck disable=SC2016 # $1 expands in the inner bash
healthy() {
  timeout 2 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3
    read -r _ code _ <&3
    [ "$code" = 200 ]' _ "$1" 2>/dev/null
}

# in_use PORT: something accepts connections there.
# shellcheck disable=SC2016
in_use() { timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }

# holds PID PORT: process PID holds every TCP socket listening on PORT,
# and there is one, so a connection to 127.0.0.1:PORT reaches PID (as
# internal/loopback.HeldBy checks it). /proc/net/tcp{,6} list the
# listening sockets (state 0A) by local hex address:port and inode;
# /proc/PID/fd links to the sockets the process holds as "socket:[inode]".
holds() {
  local pid=$1 hex inodes ino fd held=' '
  hex=$(printf '%04X' "$2")
  inodes=$(awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null)
  [ -n "$inodes" ] || return 1
  for fd in /proc/"$pid"/fd/*; do held+="$(readlink "$fd" 2>/dev/null) "; done
  for ino in $inodes; do [[ $held == *" socket:[$ino] "* ]] || return 1; done
}

# start_sqld: starts sqld on a free 127.0.0.1 port (a few random tries
# below the kernel's ephemeral ports, in case another process takes the
# port first) with its data in $tmp, and waits until it is healthy, as
# served by the process started: another server that holds the port
# (sqld then exits with "Address already in use") is not taken for it.
start_sqld() {
  local p
  port=
  for _ in 1 2 3 4 5; do
    p=$((10000 + RANDOM % 22000))
    in_use "$p" && continue
    "$sqld" -d "$tmp/data.sqld" --http-listen-addr "127.0.0.1:$p" --no-welcome >"$tmp/sqld.log" 2>&1 &
    pid=$!
    for _ in $(seq 150); do # 15 s
      if holds "$pid" "$p" && healthy "$p" && holds "$pid" "$p"; then port=$p; return 0; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
    grep -q "Address already in use" "$tmp/sqld.log" || { cat "$tmp/sqld.log" >&2; die "sqld did not become healthy on 127.0.0.1:$p"; }
  done
  die "could not start sqld on a free port"
}

# stop_sqld: stops the server start_sqld started, if any, and removes $tmp.
stop_sqld() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
