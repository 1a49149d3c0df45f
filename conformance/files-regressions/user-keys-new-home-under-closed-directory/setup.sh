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
mkdir -p srv && chmod 0700 srv && chown 4242:50 srv
mkdir -p opt && chmod 0700 opt && chown 0:0 opt
mkdir -p etc/a && printf %s old > etc/a/b && chmod 0755 etc/a/b && chown 0:0 etc/a/b
mkdir -p home/alice && printf %s old > home/alice/f && chmod 0644 home/alice/f && chown 0:0 home/alice/f
mkdir -p etc/systemd/system usr/lib/systemd/system
printf %s '[Unit]
Description=u
[Service]
ExecStart=/bin/true
[Install]
WantedBy=multi-user.target
' > usr/lib/systemd/system/b.service
mkdir -p etc/systemd/system/multi-user.target.wants && ln -sf /usr/lib/systemd/system/b.service etc/systemd/system/multi-user.target.wants/b.service
printf %s '[Socket]
ListenStream=1
[Install]
WantedBy=sockets.target
' > usr/lib/systemd/system/d.socket
mkdir -p etc/systemd/system/sockets.target.wants && ln -sf /usr/lib/systemd/system/d.socket etc/systemd/system/sockets.target.wants/d.socket
printf %s '[Unit]
Description=s
[Service]
ExecStart=/bin/true
' > etc/systemd/system/static.service
ln -sf /dev/null etc/systemd/system/m.service
{ mkdir -p etc/systemd/system/a.service/sub; } 2>/dev/null || true
