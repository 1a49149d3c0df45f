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
mkdir -p opt && chmod 0750 opt && chown 4242:50 opt
mkdir -p var/x && chmod 0750 var/x && chown 4242:50 var/x
mkdir -p etc/a && chmod 0711 etc/a && chown 1001:1001 etc/a
mkdir -p etc/systemd/system usr/lib/systemd/system
ln -sf /dev/null etc/systemd/system/m.service
{ mkdir -p etc/systemd/system && printf x > etc/systemd/system/b.service.d; } 2>/dev/null || true
{ mkdir -p etc/systemd/system-preset/20-ignition.preset; } 2>/dev/null || true
