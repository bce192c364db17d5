// Trillian ia64 boot-check payload: a freestanding /init (no libc).
//
// It proves that an ia64 kernel reached user space and tells the boot check
// which kernel and processor it ran on:
//   1. opens /dev/console for writing (creating it with mknod if the root
//      file system has no /dev/console; falls back to fd 1),
//   2. sets the kernel's console log level to 1 (emergencies only), so
//      kernel messages cannot split the lines below, and prints
//      TRILLIAN-BOOT-OK release=<uname -r> machine=<uname -m>
//   3. mounts proc on /proc and prints the processor-describing lines of
//      /proc/cpuinfo, each as  TRILLIAN-CPUINFO <line>
//   4. prints   TRILLIAN-POWEROFF   and calls reboot(2) with POWER_OFF.
// Failures print TRILLIAN-BOOT-ERROR <what> errno=0x<hex> and go on.
//
// Assembled with GNU as for ia64 directly (no preprocessor):
//   ia64-linux-gnu-as -x --fatal-warnings -o init.o init.S
//   ia64-linux-gnu-ld --fatal-warnings -static -e _start -o init init.o
//
// Linux ia64 system call convention: number in r15 (1024 + the number in
// arch/ia64/kernel/syscalls/syscall.tbl), arguments in out0..out5,
// `break.i 0x100000`; result in r8, r10 = -1 on error (r8 = errno). The
// call clobbers the output registers, the scratch registers (r2, r3, r9,
// r11, r14..r31), p6..p15 and b6, b7, so state lives in stacked locals.

	.equ SYS_read,    1026	// 1024 + 3 ... see syscall.tbl
	.equ SYS_write,   1027
	.equ SYS_open,    1028
	.equ SYS_close,   1029
	.equ SYS_mknod,   1037
	.equ SYS_mount,   1043
	.equ SYS_mkdir,   1055
	.equ SYS_reboot,  1096
	.equ SYS_syslog,  1117
	.equ SYS_uname,   1130	// newuname
	.equ SYS_exit_group, 1236

	.equ O_RDONLY,    0
	.equ O_WRONLY_NOCTTY, 0x101	// O_WRONLY | O_NOCTTY
	.equ S_IFCHR_0600, 0x2180	// S_IFCHR | 0600
	.equ DEV_CONSOLE, 0x501		// major 5, minor 1 (new_encode_dev)
	.equ UTS_FIELD,   65		// __NEW_UTS_LEN + 1
	.equ UTS_RELEASE, 2 * UTS_FIELD
	.equ UTS_MACHINE, 4 * UTS_FIELD
	.equ CPUBUF_SIZE, 16384
	.equ SYSLOG_ACTION_CONSOLE_LEVEL, 8

	.macro SYSCALL nr
	mov r15 = \nr
	;;
	break.i 0x100000
	;;
	.endm

	// write(loc1, label, len) through write_buf
	.macro PUTS label, len
	mov out0 = loc1
	movl out1 = \label
	mov out2 = \len
	;;
	br.call.sptk.many b0 = write_buf
	;;
	.endm

	// TRILLIAN-BOOT-ERROR <msg> errno=0x<r8>\n; r8 holds the errno
	.macro REPORT_ERROR msg, msglen
	mov loc7 = r8
	;;
	PUTS s_error, s_error_len
	PUTS \msg, \msglen
	PUTS s_errno, s_errno_len
	mov out0 = loc1
	mov out1 = loc7
	;;
	br.call.sptk.many b0 = put_hex
	;;
	PUTS s_nl, 1
	.endm

	.text
	.align 32
	.global _start
	.proc _start
	.type _start, @function
_start:
	// loc1: output fd, loc2: cpuinfo fd, loc3: bytes read, loc7: errno
	alloc loc0 = ar.pfs, 0, 8, 6, 0
	mov loc1 = 1
	;;
	// ---- console
	movl out0 = s_devconsole
	mov out1 = O_WRONLY_NOCTTY
	mov out2 = 0
	;;
	SYSCALL SYS_open
	cmp.eq p6, p7 = -1, r10
	;;
(p7)	mov loc1 = r8
(p7)	br.cond.sptk.many .Lconsole_done
	;;
	movl out0 = s_dev
	mov out1 = 0755
	;;
	SYSCALL SYS_mkdir
	movl out0 = s_devconsole
	mov out1 = S_IFCHR_0600
	mov out2 = DEV_CONSOLE
	;;
	SYSCALL SYS_mknod
	movl out0 = s_devconsole
	mov out1 = O_WRONLY_NOCTTY
	mov out2 = 0
	;;
	SYSCALL SYS_open
	cmp.eq p6, p7 = -1, r10
	;;
(p7)	mov loc1 = r8
	;;
.Lconsole_done:
	// ---- the kernel's console to emergencies only (syslog(2) level 1), so
	// that no kernel message lands inside the lines below, which are written
	// a piece at a time (seen: an input driver's probe message in the middle
	// of the marker); "reboot: Power down" is an emergency and still shows
	mov out0 = SYSLOG_ACTION_CONSOLE_LEVEL
	mov out1 = 0
	mov out2 = 1
	;;
	SYSCALL SYS_syslog
	// ---- marker line from uname(2)
	movl out0 = utsbuf
	;;
	SYSCALL SYS_uname
	cmp.eq p6, p7 = -1, r10
	;;
(p7)	br.cond.sptk.many .Luname_ok
	;;
	REPORT_ERROR s_uname, s_uname_len
.Luname_ok:
	PUTS s_marker, s_marker_len
	mov out0 = loc1
	movl out1 = utsbuf + UTS_RELEASE
	;;
	br.call.sptk.many b0 = puts_z
	;;
	PUTS s_machine, s_machine_len
	mov out0 = loc1
	movl out1 = utsbuf + UTS_MACHINE
	;;
	br.call.sptk.many b0 = puts_z
	;;
	PUTS s_nl, 1

	// ---- /proc/cpuinfo
	movl out0 = s_proc
	mov out1 = 0555
	;;
	SYSCALL SYS_mkdir		// EEXIST or EROFS are fine
	movl out0 = s_procfs
	movl out1 = s_proc
	movl out2 = s_procfs
	mov out3 = 0
	mov out4 = 0
	;;
	SYSCALL SYS_mount
	cmp.eq p6, p7 = -1, r10
	;;
(p7)	br.cond.sptk.many .Lmount_ok
	;;
	REPORT_ERROR s_mount, s_mount_len
	br.cond.sptk.many .Lpoweroff
	;;
.Lmount_ok:
	movl out0 = s_cpuinfo
	mov out1 = O_RDONLY
	mov out2 = 0
	;;
	SYSCALL SYS_open
	cmp.eq p6, p7 = -1, r10
	;;
(p7)	br.cond.sptk.many .Lopen_ok
	;;
	REPORT_ERROR s_cpuinfo, s_cpuinfo_len
	br.cond.sptk.many .Lpoweroff
	;;
.Lopen_ok:
	mov loc2 = r8
	mov loc3 = 0
	;;
.Lread_more:				// read until EOF or the buffer is full
	mov out0 = loc2
	movl out1 = cpubuf
	movl r16 = CPUBUF_SIZE
	;;
	add out1 = out1, loc3
	sub out2 = r16, loc3
	;;
	cmp.eq p6, p0 = 0, out2
(p6)	br.cond.dpnt.many .Lread_done
	;;
	SYSCALL SYS_read
	cmp.eq p6, p0 = -1, r10
	;;
(p6)	br.cond.dpnt.many .Lread_error
	cmp.eq p6, p0 = 0, r8
	;;
(p6)	br.cond.dpnt.many .Lread_done
	add loc3 = loc3, r8
	br.cond.sptk.many .Lread_more
	;;
.Lread_error:
	REPORT_ERROR s_cpuinfo, s_cpuinfo_len
.Lread_done:
	mov out0 = loc2
	;;
	SYSCALL SYS_close
	mov out0 = loc1
	movl out1 = cpubuf
	mov out2 = loc3
	;;
	br.call.sptk.many b0 = filter_lines
	;;

	// ---- power off
.Lpoweroff:
	PUTS s_poweroff, s_poweroff_len
	movl out0 = 0xfee1dead		// LINUX_REBOOT_MAGIC1
	movl out1 = 672274793		// LINUX_REBOOT_MAGIC2
	movl out2 = 0x4321fedc		// LINUX_REBOOT_CMD_POWER_OFF
	mov out3 = 0
	;;
	SYSCALL SYS_reboot
	REPORT_ERROR s_reboot, s_reboot_len
	mov out0 = 1
	;;
	SYSCALL SYS_exit_group		// init exiting: the kernel panics
.Lforever:
	br.cond.sptk.many .Lforever
	;;
	.endp _start

// write_buf(fd, ptr, len): one write(2); returns its r8.
	.proc write_buf
write_buf:
	alloc loc0 = ar.pfs, 3, 2, 3, 0
	mov loc1 = b0
	mov out0 = in0
	mov out1 = in1
	mov out2 = in2
	;;
	SYSCALL SYS_write
	mov ar.pfs = loc0
	mov b0 = loc1
	;;
	br.ret.sptk.many b0
	;;
	.endp write_buf

// puts_z(fd, str): writes the NUL-terminated string str.
	.proc puts_z
puts_z:
	alloc loc0 = ar.pfs, 2, 3, 3, 0
	mov loc1 = b0
	mov loc2 = in1
	;;
.Lstrlen:
	ld1 r16 = [loc2]
	;;
	cmp.eq p6, p7 = 0, r16
	;;
(p7)	adds loc2 = 1, loc2
(p7)	br.cond.sptk.few .Lstrlen
	;;
	mov out0 = in0
	mov out1 = in1
	sub out2 = loc2, in1
	;;
	SYSCALL SYS_write
	mov ar.pfs = loc0
	mov b0 = loc1
	;;
	br.ret.sptk.many b0
	;;
	.endp puts_z

// put_hex(fd, value): writes value as 0x<lowercase hex>.
	.proc put_hex
put_hex:
	alloc loc0 = ar.pfs, 2, 4, 3, 0
	mov loc1 = b0
	movl loc2 = hexbuf + 18		// one past the last digit
	mov loc3 = in1
	;;
	mov r16 = loc2
	;;
.Lhex_digit:
	and r17 = 15, loc3
	shr.u loc3 = loc3, 4
	adds r16 = -1, r16
	;;
	cmp.ltu p6, p7 = 9, r17		// p6: digit > 9
	;;
(p6)	adds r17 = 87, r17		// 'a' - 10
(p7)	adds r17 = 48, r17		// '0'
	;;
	st1 [r16] = r17
	cmp.ne p6, p0 = 0, loc3
	;;
(p6)	br.cond.sptk.few .Lhex_digit
	;;
	adds r16 = -2, r16
	mov r17 = 48			// '0'
	mov r18 = 120			// 'x'
	;;
	adds r19 = 1, r16
	st1 [r16] = r17
	;;
	st1 [r19] = r18
	mov out0 = in0
	mov out1 = r16
	sub out2 = loc2, r16
	;;
	SYSCALL SYS_write
	mov ar.pfs = loc0
	mov b0 = loc1
	;;
	br.ret.sptk.many b0
	;;
	.endp put_hex

// filter_lines(fd, buf, len): writes "TRILLIAN-CPUINFO <line>" for every
// line of buf that starts with one of the strings in `prefixes`.
	.proc filter_lines
filter_lines:
	// loc2: line start, loc3: buffer end, loc4: past the line's '\n',
	// loc5: cursor in the prefix table
	alloc loc0 = ar.pfs, 3, 6, 3, 0
	mov loc1 = b0
	mov loc2 = in1
	add loc3 = in1, in2
	;;
.Lline:
	cmp.geu p6, p0 = loc2, loc3
	;;
(p6)	br.cond.dpnt.many .Lfilter_done
	mov loc4 = loc2
	;;
.Lscan:
	cmp.geu p6, p0 = loc4, loc3
	;;
(p6)	br.cond.dpnt.many .Lscanned
	ld1 r16 = [loc4], 1
	;;
	cmp.eq p6, p0 = 10, r16		// '\n'
	;;
(p6)	br.cond.dpnt.many .Lscanned
	br.cond.sptk.many .Lscan
	;;
.Lscanned:
	movl loc5 = prefixes
	;;
.Lnext_prefix:
	ld8 r17 = [loc5], 8
	;;
	cmp.eq p6, p0 = 0, r17		// end of table: no match
	;;
(p6)	br.cond.dpnt.many .Lnext_line
	mov r18 = loc2
	;;
.Lcompare:
	ld1 r19 = [r17], 1
	;;
	cmp.eq p6, p0 = 0, r19		// whole prefix matched
	;;
(p6)	br.cond.dpnt.many .Lmatch
	cmp.geu p7, p0 = r18, loc4	// line shorter than prefix
	;;
(p7)	br.cond.dpnt.many .Lnext_prefix
	ld1 r20 = [r18], 1
	;;
	cmp.eq p6, p0 = r19, r20
	;;
(p6)	br.cond.sptk.many .Lcompare
	br.cond.sptk.many .Lnext_prefix
	;;
.Lmatch:
	mov out0 = in0
	movl out1 = s_cpuprefix
	mov out2 = s_cpuprefix_len
	;;
	br.call.sptk.many b0 = write_buf
	;;
	mov out0 = in0
	mov out1 = loc2
	sub out2 = loc4, loc2
	;;
	br.call.sptk.many b0 = write_buf
	;;
.Lnext_line:
	mov loc2 = loc4
	br.cond.sptk.many .Lline
	;;
.Lfilter_done:
	mov ar.pfs = loc0
	mov b0 = loc1
	;;
	br.ret.sptk.many b0
	;;
	.endp filter_lines

	.section .rodata
s_devconsole:	.asciz "/dev/console"
s_dev:		.asciz "/dev"
s_proc:		.asciz "/proc"
s_procfs:	.asciz "proc"
s_cpuinfo:	.ascii "/proc/cpuinfo"
	.equ s_cpuinfo_len, . - s_cpuinfo
		.byte 0
s_marker:	.ascii "TRILLIAN-BOOT-OK release="
	.equ s_marker_len, . - s_marker
s_machine:	.ascii " machine="
	.equ s_machine_len, . - s_machine
s_nl:		.ascii "\n"
s_cpuprefix:	.ascii "TRILLIAN-CPUINFO "
	.equ s_cpuprefix_len, . - s_cpuprefix
s_poweroff:	.ascii "TRILLIAN-POWEROFF\n"
	.equ s_poweroff_len, . - s_poweroff
s_error:	.ascii "TRILLIAN-BOOT-ERROR "
	.equ s_error_len, . - s_error
s_errno:	.ascii " errno="
	.equ s_errno_len, . - s_errno
s_uname:	.ascii "uname"
	.equ s_uname_len, . - s_uname
s_mount:	.ascii "mount /proc"
	.equ s_mount_len, . - s_mount
s_reboot:	.ascii "reboot"
	.equ s_reboot_len, . - s_reboot
// The lines of ia64 /proc/cpuinfo that describe the processor
// ("model" also matches "model name", "arch" also "archrev").
p_processor:	.asciz "processor"
p_vendor:	.asciz "vendor"
p_arch:		.asciz "arch"
p_family:	.asciz "family"
p_model:	.asciz "model"
p_revision:	.asciz "revision"
p_features:	.asciz "features"

	.section .data
	.align 8
prefixes:
	data8 p_processor, p_vendor, p_arch, p_family, p_model, p_revision
	data8 p_features, 0

	.section .bss
	.align 16
utsbuf:	.skip 6 * UTS_FIELD
	.align 16
hexbuf:	.skip 24
	.align 16
cpubuf:	.skip CPUBUF_SIZE
