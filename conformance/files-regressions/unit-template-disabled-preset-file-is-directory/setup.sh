#!/bin/sh
# Creates the starting target root in the current directory (an empty dir).
set -e
umask 022
mkdir -p etc home/alice
cat > etc/passwd <<'EOT'
root:x:0:0:root:/root:/bin/bash
daemon:x:4242:4242:daemon:/usr/sbin:/usr/sbin/nologin
alice:x:1001:1001:Alice:/home/alice:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOT
cat > etc/group <<'EOT'
root:x:0:
wheel:x:10:
staff:x:50:alice
users:x:100:
alice:x:1001:
daemon:x:4242:
nogroup:x:65534:
EOT
cat > etc/shadow <<'EOT'
root:*:19000:0:99999:7:::
daemon:*:19000:0:99999:7:::
alice:!:19000:0:99999:7:::
nobody:*:19000:0:99999:7:::
EOT
cat > etc/gshadow <<'EOT'
root:*::
wheel:*::
staff:*::alice
users:*::
alice:!::
daemon:*::
nogroup:*::
EOT
chmod 0640 etc/shadow etc/gshadow
chown 1001:1001 home/alice
chmod 0700 home/alice
# generated scenario
mkdir -p home/bob && chmod 0750 home/bob && chown 4242:50 home/bob
mkdir -p etc/a && printf %s 'old
' > etc/a/b && chmod 0644 etc/a/b && chown 0:0 etc/a/b
mkdir -p opt && printf %s 'a
b
' > opt/o && chmod 0755 opt/o && chown 1001:1001 opt/o
mkdir -p home/alice && rm -rf home/alice/.ssh && ln -s /srv home/alice/.ssh
mkdir -p srv && rm -rf srv/up && ln -s ../var/x/.. srv/up
chown -h 4242:50 srv/up
{ mkdir -p etc/systemd/system/a.service.d/10-a.conf; } 2>/dev/null || true
{ mkdir -p etc/systemd/system-preset/20-ignition.preset; } 2>/dev/null || true
