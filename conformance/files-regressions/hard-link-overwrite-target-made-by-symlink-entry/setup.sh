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
mkdir -p var/x && chmod 0700 var/x && chown 4242:50 var/x
mkdir -p home/alice/.ssh/authorized_keys.d && chmod 0755 home/alice/.ssh/authorized_keys.d && chown 0:0 home/alice/.ssh/authorized_keys.d
mkdir -p opt && chmod 0750 opt && chown 4242:50 opt
mkdir -p home/alice/.ssh && chmod 0777 home/alice/.ssh && chown 4242:50 home/alice/.ssh
mkdir -p opt && printf %s old > opt/o && chmod 0640 opt/o && chown 0:0 opt/o
mkdir -p etc/a && printf %s old > etc/a/b && chmod 0644 etc/a/b && chown 4242:4242 etc/a/b
mkdir -p etc && printf %s 'old
' > etc/b && chmod 0600 etc/b && chown 0:0 etc/b
mkdir -p . && rm -rf abs && ln -s /opt abs
chown -h 4242:50 abs
