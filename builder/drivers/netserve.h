/* The server side of a netboot check on an emulator whose firmware cannot
 * boot from the network (qemu-system-ia64: no PXE). `trillian
 * __netboot-serve` (main.c) is the program the boot check's console runs:
 *
 *   1. it reads back every file of the stand-in boot disk (mtools) and
 *      compares it byte for byte with the netboot tree's file it was copied
 *      from, and checks that the disk holds nothing else: one line per file
 *      and a summary ("stand-in disk: N files, each identical to the
 *      tree's") in the transcript, or a mismatch and exit 4;
 *   2. it moves into a network namespace of its own (a user namespace too
 *      when not root), makes the tap device trl0 with the server's address
 *      (x.y.z.1/24 of the dnsmasq.conf's dhcp-range) and starts the real
 *      dnsmasq with the tree's dnsmasq.conf (its tftp-root and interface
 *      pointed at the tree and trl0), logging to the transcript; if dnsmasq
 *      exits or does not open its TFTP port within 10 s: one line naming
 *      the cause, exit 4;
 *   3. it runs the emulator (the arguments after --, whose NIC is a tap on
 *      trl0), passing the console through, and exits with its status after
 *      stopping dnsmasq.
 *
 *   trillian __netboot-serve --work DIR --tftp DIR --conf FILE
 *       --standin IMAGE[@@OFFSET] [--file DISKPATH=TREEFILE]... -- EMULATOR ARGS...
 *
 * IMAGE@@OFFSET (mtools' syntax): the FAT file system starts OFFSET bytes
 * into IMAGE (the check's stand-in is a GPT disk, its ESP at 1 MiB).
 *
 * Needs dnsmasq ($TRILLIAN_DNSMASQ names another), ip (iproute2) and
 * mtools, and either root, or unprivileged user namespaces (Debian's
 * default) with /dev/net/tun open to the user (mode 0666, Debian's
 * default). Nothing touches the host's network. */
#ifndef TRILLIAN_NETSERVE_H
#define TRILLIAN_NETSERVE_H

#define NETSERVE_COMMAND "__netboot-serve"
#define NETSERVE_TAP "trl0"

int netserve_main(int argc, char **argv);
/* The dnsmasq to run: $TRILLIAN_DNSMASQ (a path or a name), else "dnsmasq". */
const char *netserve_dnsmasq(void);

#endif
