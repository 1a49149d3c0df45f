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
mkdir -p home/alice/.ssh/authorized_keys.d && chmod 0777 home/alice/.ssh/authorized_keys.d && chown 4242:50 home/alice/.ssh/authorized_keys.d
mkdir -p srv && chmod 0777 srv && chown 0:0 srv
mkdir -p var/x && chmod 0755 var/x && chown 0:0 var/x
mkdir -p var/x && printf %s 'a
b
' > var/x/y && chmod 0644 var/x/y && chown 0:0 var/x/y
mkdir -p . && rm -rf dir && ln -s /etc/a dir
mkdir -p etc && rm -rf etc/.ignition-result.json && ln -s /nowhere-record etc/.ignition-result.json
mkdir -p home/alice && rm -rf home/alice/.ssh && ln -s /srv home/alice/.ssh
mkdir -p etc/systemd/system usr/lib/systemd/system
printf %s '[Socket]
ListenStream=1
[Install]
WantedBy=sockets.target
' > usr/lib/systemd/system/d.socket
mkdir -p etc/systemd/system/sockets.target.wants && ln -sf /usr/lib/systemd/system/d.socket etc/systemd/system/sockets.target.wants/d.socket
ln -sf /dev/null etc/systemd/system/m.service
{ mkdir -p etc/systemd/system/a.service/sub; } 2>/dev/null || true
{ mkdir -p etc/systemd && rm -rf etc/systemd/system && ln -s /srv/units etc/systemd/system; } 2>/dev/null || true
