# shellcheck shell=bash
# VM_NET is read by run-vm-tests:
# shellcheck disable=SC2034
# http: a file whose contents flint fetches over HTTP from a server on the host, reached
# through QEMU user networking (the guest sees the host's 127.0.0.1 as 10.0.2.2), with a
# sha512 verification hash as configs in the wild carry.

VM_NET=1
HTTP_BODY="Welcome to a flint-provisioned machine (served over HTTP)."

scenario_setup() {
  local dir=$1
  mkdir -p "$dir/www"
  printf '%s\n' "$HTTP_BODY" >"$dir/www/motd"
  # Port 0: the kernel picks a free port, so parallel runs can't collide; -u so the
  # "Serving HTTP on ... port N" line reaches the log at once.
  vm_spawn python3 -u -m http.server --bind 127.0.0.1 --directory "$dir/www" 0 >"$dir/http.log" 2>&1
  for _ in $(seq 50); do
    HTTP_PORT=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$dir/http.log")
    [ -n "$HTTP_PORT" ] && return 0
    sleep 0.1
  done
  echo "http server did not start: $(cat "$dir/http.log")" >&2
  return 1
}

scenario_disks() {
  truncate -s 256M "$1/vda.img"
}

scenario_config() {
  local hash
  hash=$(sha512sum "$(dirname "$1")/www/motd" | cut -d' ' -f1)
  cat >"$1" <<EOF
{
  "ignition": { "version": "3.3.0" },
  "storage": {
    "files": [
      { "path": "/etc/motd", "mode": 420,
        "contents": { "source": "http://10.0.2.2:$HTTP_PORT/motd",
                      "verification": { "hash": "sha512-$hash" } } }
    ]
  }
}
EOF
}

scenario_guest() {
  cat >"$1" <<'EOF'
step "mkfs.ext4 /dev/vda"
mkfs.ext4 -q -F -L root /dev/vda
mount -t ext4 /dev/vda /sysroot
seed-root /sysroot
step "flint apply (fetches over HTTP)"
flint apply --config-source auto --root /sysroot --stage files
umount /sysroot
EOF
}

scenario_verify() {
  local dir=$1 m=$1/mnt
  check "the guest fetched /motd from the host" grep -q '"GET /motd HTTP' "$dir/http.log"
  check "mount the ext4 image" ro_mount "$dir/vda.img" 0 "$m" || return 1
  check "/etc/motd holds the served body" [ "$(cat "$m/etc/motd" 2>/dev/null)" = "$HTTP_BODY" ]
  checks_ok
}
