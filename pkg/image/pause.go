package image

import (
	"encoding/binary"
	"fmt"
)

// PauseImageName is the pod sandbox image every skiff node uses. skiff
// builds it itself ([PauseImage]) and imports it into its containerd: no
// registry is reachable.
const PauseImageName = "localhost/skiff/pause:3.10"

// PauseEntrypoint is the pause executable's path in the image.
const PauseEntrypoint = "/pause"

// PauseImage is the pod sandbox image for arch (a GOARCH): one static
// executable, /pause. Only amd64 exists; any other architecture is an
// error.
func PauseImage(arch string) (Image, error) {
	elf, err := PauseELF(arch)
	if err != nil {
		return Image{}, err
	}
	return Image{
		Names:      []string{PauseImageName},
		Arch:       arch,
		Entrypoint: []string{PauseEntrypoint},
		Files:      []File{{Path: PauseEntrypoint, Mode: 0o755, Content: elf}},
	}, nil
}

// PauseELF returns the pause program for arch as a static ELF executable.
//
// The program (x86-64 Linux, no libc, no stack use) is what upstream's
// pause.c does with a signal handler, done with a synchronous wait:
//
//	rt_sigprocmask(SIG_BLOCK, {SIGINT, SIGTERM, SIGCHLD})
//	for {
//		sig = rt_sigtimedwait({SIGINT, SIGTERM, SIGCHLD}, NULL, NULL)  // no timeout
//		if sig < 0 { continue }                 // EINTR (e.g. after SIGSTOP/SIGCONT)
//		if sig != SIGCHLD { exit_group(0) }     // SIGINT or SIGTERM
//		while wait4(-1, NULL, WNOHANG, NULL) > 0 {}  // reap every zombie
//	}
//
// Blocked signals are never discarded, not even for the init of a PID
// namespace, so the process sleeps in rt_sigtimedwait until a child
// (reparented to it as PID 1 of a pod sharing its process namespace)
// exits or it is told to stop. SIGKILL ends it as any process.
func PauseELF(arch string) ([]byte, error) {
	if arch != "amd64" {
		return nil, fmt.Errorf("the pause image exists for amd64 only, not %s: skiff's pause program is hand-assembled x86-64 machine code", arch)
	}
	return pauseAMD64(), nil
}

// pauseCode is the x86-64 machine code, loaded right after the ELF header
// and the program header (file offset 0x78, address 0x400078). Offsets in
// the comments are relative to the code's start; jumps are rel8 from the
// next instruction, RIP-relative loads disp32 from the next instruction.
var pauseCode = []byte{
	// 00: rt_sigprocmask(SIG_BLOCK, &set, NULL, 8)
	0xb8, 0x0e, 0x00, 0x00, 0x00, // 00: mov eax, 14          ; __NR_rt_sigprocmask
	0x31, 0xff, //                   05: xor edi, edi         ; how = SIG_BLOCK (0)
	0x48, 0x8d, 0x35, 0x4f, 0x00, 0x00, 0x00, // 07: lea rsi, [rip+0x4f] ; &set (0x0e+0x4f = 0x5d)
	0x31, 0xd2, //                   0e: xor edx, edx         ; oldset = NULL
	0x41, 0xba, 0x08, 0x00, 0x00, 0x00, // 10: mov r10d, 8    ; sizeof(sigset_t)
	0x0f, 0x05, //                   16: syscall

	// wait (18): sig = rt_sigtimedwait(&set, NULL, NULL, 8)
	0xb8, 0x80, 0x00, 0x00, 0x00, // 18: mov eax, 128         ; __NR_rt_sigtimedwait
	0x48, 0x8d, 0x3d, 0x39, 0x00, 0x00, 0x00, // 1d: lea rdi, [rip+0x39] ; &set (0x24+0x39 = 0x5d)
	0x31, 0xf6, //                   24: xor esi, esi         ; info = NULL
	0x31, 0xd2, //                   26: xor edx, edx         ; timeout = NULL: wait forever
	0x41, 0xba, 0x08, 0x00, 0x00, 0x00, // 28: mov r10d, 8    ; sizeof(sigset_t)
	0x0f, 0x05, //                   2e: syscall
	0x85, 0xc0, //                   30: test eax, eax
	0x78, 0xe4, //                   32: js wait (0x34-0x1c = 0x18) ; -errno (EINTR): wait again
	0x83, 0xf8, 0x11, //             34: cmp eax, 17          ; SIGCHLD?
	0x75, 0x1b, //                   37: jne exit (0x39+0x1b = 0x54) ; SIGINT or SIGTERM

	// reap (39): wait4(-1, NULL, WNOHANG, NULL) until it returns <= 0
	0xb8, 0x3d, 0x00, 0x00, 0x00, // 39: mov eax, 61          ; __NR_wait4
	0x48, 0x83, 0xcf, 0xff, //       3e: or rdi, -1           ; pid = -1: any child
	0x31, 0xf6, //                   42: xor esi, esi         ; wstatus = NULL
	0xba, 0x01, 0x00, 0x00, 0x00, // 44: mov edx, 1           ; options = WNOHANG
	0x45, 0x31, 0xd2, //             49: xor r10d, r10d       ; rusage = NULL
	0x0f, 0x05, //                   4c: syscall
	0x85, 0xc0, //                   4e: test eax, eax
	0x7f, 0xe7, //                   50: jg reap (0x52-0x19 = 0x39) ; reaped one: try the next
	0xeb, 0xc4, //                   52: jmp wait (0x54-0x3c = 0x18) ; 0 (none exited) or ECHILD

	// exit (54): exit_group(0)
	0xb8, 0xe7, 0x00, 0x00, 0x00, // 54: mov eax, 231         ; __NR_exit_group
	0x31, 0xff, //                   59: xor edi, edi         ; status 0
	0x0f, 0x05, //                   5b: syscall

	// set (5d): sigset_t, bit n-1 for signal n:
	// SIGINT (2) bit 1, SIGTERM (15) bit 14, SIGCHLD (17) bit 16 = 0x14002
	0x02, 0x40, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
}

const (
	pauseBase    = 0x400000 // load address of the file's first byte
	elfHeaderLen = 64
	phdrLen      = 56
)

// pauseAMD64 wraps pauseCode in a 64-bit ELF header and one PT_LOAD
// program header mapping the whole file read+execute at pauseBase. No
// section headers (the loader needs none), no PT_GNU_STACK (the program
// never touches its stack).
func pauseAMD64() []byte {
	size := elfHeaderLen + phdrLen + len(pauseCode)
	b := make([]byte, 0, size)
	le := binary.LittleEndian
	// ELF header.
	b = append(b, 0x7f, 'E', 'L', 'F', // magic
		2,                   // EI_CLASS: ELFCLASS64
		1,                   // EI_DATA: little endian
		1,                   // EI_VERSION: current
		0,                   // EI_OSABI: System V
		0,                   // EI_ABIVERSION
		0, 0, 0, 0, 0, 0, 0) // padding to 16 bytes
	b = le.AppendUint16(b, 2)                              // e_type: ET_EXEC
	b = le.AppendUint16(b, 0x3e)                           // e_machine: EM_X86_64
	b = le.AppendUint32(b, 1)                              // e_version
	b = le.AppendUint64(b, pauseBase+elfHeaderLen+phdrLen) // e_entry: the code
	b = le.AppendUint64(b, elfHeaderLen)                   // e_phoff: right after this header
	b = le.AppendUint64(b, 0)                              // e_shoff: no sections
	b = le.AppendUint32(b, 0)                              // e_flags
	b = le.AppendUint16(b, elfHeaderLen)                   // e_ehsize
	b = le.AppendUint16(b, phdrLen)                        // e_phentsize
	b = le.AppendUint16(b, 1)                              // e_phnum
	b = le.AppendUint16(b, 64)                             // e_shentsize
	b = le.AppendUint16(b, 0)                              // e_shnum
	b = le.AppendUint16(b, 0)                              // e_shstrndx
	// Program header: PT_LOAD of the whole file.
	b = le.AppendUint32(b, 1)            // p_type: PT_LOAD
	b = le.AppendUint32(b, 5)            // p_flags: PF_R|PF_X
	b = le.AppendUint64(b, 0)            // p_offset
	b = le.AppendUint64(b, pauseBase)    // p_vaddr
	b = le.AppendUint64(b, pauseBase)    // p_paddr
	b = le.AppendUint64(b, uint64(size)) // p_filesz
	b = le.AppendUint64(b, uint64(size)) // p_memsz
	b = le.AppendUint64(b, 0x1000)       // p_align: page
	return append(b, pauseCode...)
}
