package probe

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The machine trees under testdata are written by this generator from the
// specs below (values from datasheets, pci.ids and public nvidia-smi and
// sysfs dumps; see testdata/README.md), so that they are reviewable and can
// be rebuilt:
//
//	go test ./probe -run TestRegenerateFixtures -regen
//
// A snapshot of a real machine (`headroom probe snapshot`) unpacked under
// testdata is a fixture too and needs no generator.
var regen = flag.Bool("regen", false, "rewrite the generated machine trees under testdata")

func TestRegenerateFixtures(t *testing.T) {
	if !*regen {
		t.Skip("pass -regen to rewrite testdata machine trees")
	}
	for _, spec := range fixtureSpecs() {
		dir := filepath.Join("testdata", spec.name)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		spec.write(t, &tree{t: t, root: dir})
	}
}

// tree writes files and symlinks below root.
type tree struct {
	t    *testing.T
	root string
}

func (tr *tree) file(p, content string) {
	tr.t.Helper()
	full := filepath.Join(tr.root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// link makes p a symlink to the root-relative target, written relative.
func (tr *tree) link(p, target string) {
	tr.t.Helper()
	rel, err := filepath.Rel(filepath.Dir(p), target)
	if err != nil {
		tr.t.Fatal(err)
	}
	full := filepath.Join(tr.root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.Symlink(rel, full); err != nil {
		tr.t.Fatal(err)
	}
}

type cpuSpec struct {
	vendor, model, flags, microcode string
	family, modelNum, stepping      int
	packages, cores, smt            int // cores per package
	mhz                             float64
	cacheKB                         int
}

type dimm struct {
	sizeMiB  int
	typeCode byte
	speed    int
	form     byte
	locator  string
	maker    string
	part     string
}

type pciFn struct {
	addr, bridge string // bridge "" = on the root bus
	class        string
	vendor, dev  string
	subsys       string // "vvvv:dddd"
	driver       string
	numa         int
	card         int // DRM card number, -1 none
	files        map[string]string
}

type fixtureSpec struct {
	name, kernel string
	dmi          [3]string
	cpu          cpuSpec
	memTotalKB   int64
	memAvailKB   int64
	physGiB      int64 // online memory blocks (2 GiB each)
	dimms        []dimm
	pci          []pciFn
	params       map[string]string
	smi          string
}

func (s fixtureSpec) write(t *testing.T, tr *tree) {
	tr.file("proc/sys/kernel/osrelease", s.kernel+"\n")
	for i, n := range []string{"sys_vendor", "product_name", "board_name"} {
		if s.dmi[i] != "" {
			tr.file("sys/class/dmi/id/"+n, s.dmi[i]+"\n")
		}
	}
	tr.file("proc/meminfo", meminfoText(s.memTotalKB, s.memAvailKB))
	tr.file("proc/cpuinfo", cpuinfoText(s.cpu))
	s.writeCPUTopology(tr)
	s.writeMemoryBlocks(tr)
	for i, d := range s.dimms {
		tr.file(fmt.Sprintf("sys/firmware/dmi/entries/17-%d/raw", i), string(smbios17Raw(d, i)))
	}
	for p, v := range s.params {
		tr.file(p, v+"\n")
	}
	for _, fn := range s.pci {
		writePCI(tr, fn)
	}
	if s.smi != "" {
		tr.file(smiSavedOutput, s.smi)
	}
}

func meminfoText(total, avail int64) string {
	free := avail * 9 / 10
	cached := avail - free
	return fmt.Sprintf(`MemTotal:       %d kB
MemFree:        %d kB
MemAvailable:   %d kB
Buffers:          %d kB
Cached:          %d kB
SwapCached:            0 kB
Active:          %d kB
Inactive:        %d kB
SwapTotal:       8388604 kB
SwapFree:        8388604 kB
Dirty:               212 kB
Writeback:             0 kB
AnonPages:       %d kB
Mapped:           412388 kB
Shmem:             48212 kB
KReclaimable:     301764 kB
Slab:             712304 kB
SReclaimable:     301764 kB
SUnreclaim:       410540 kB
KernelStack:       21904 kB
PageTables:        30128 kB
CommitLimit:    %d kB
Committed_AS:    6981236 kB
VmallocTotal:   34359738367 kB
VmallocUsed:      241860 kB
VmallocChunk:          0 kB
Percpu:            52224 kB
HardwareCorrupted:     0 kB
AnonHugePages:    921600 kB
ShmemHugePages:        0 kB
ShmemPmdMapped:        0 kB
FileHugePages:         0 kB
FilePmdMapped:         0 kB
Unaccepted:            0 kB
HugePages_Total:       0
HugePages_Free:        0
HugePages_Rsvd:        0
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:               0 kB
DirectMap4k:      912172 kB
DirectMap2M:    28473344 kB
DirectMap1G:    %d kB
`, total, free, avail, cached/20, cached, total-avail, cached/2, total-avail-cached/2, 8388604+total/2, total/1048576*1048576)
}

func cpuinfoText(c cpuSpec) string {
	var b strings.Builder
	threads := c.packages * c.cores * c.smt
	for n := 0; n < threads; n++ {
		pkg, core := cpuPlace(c, n)
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %d\nmodel\t\t: %d\nmodel name\t: %s\nstepping\t: %d\nmicrocode\t: %s\n",
			n, c.vendor, c.family, c.modelNum, c.model, c.stepping, c.microcode)
		fmt.Fprintf(&b, "cpu MHz\t\t: %.3f\ncache size\t: %d KB\nphysical id\t: %d\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\napicid\t\t: %d\ninitial apicid\t: %d\n",
			c.mhz, c.cacheKB, pkg, c.cores*c.smt, core, c.cores, n, n)
		fmt.Fprintf(&b, "fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 16\nwp\t\t: yes\nflags\t\t: %s\n", c.flags)
		fmt.Fprintf(&b, "bugs\t\t: sysret_ss_attrs spectre_v1 spectre_v2 spec_store_bypass\nbogomips\t: %.2f\nclflush size\t: 64\ncache_alignment\t: 64\naddress sizes\t: 48 bits physical, 57 bits virtual\npower management: ts ttp tm hwpstate cpb eff_freq_ro\n\n", c.mhz*2)
	}
	return b.String()
}

// cpuPlace numbers threads as Linux does on x86: first threads of every
// core of every package, then their SMT siblings.
func cpuPlace(c cpuSpec, n int) (pkg, core int) {
	perSMT := c.packages * c.cores
	first := n % perSMT
	return first / c.cores, first % c.cores
}

func (s fixtureSpec) writeCPUTopology(tr *tree) {
	c := s.cpu
	threads := c.packages * c.cores * c.smt
	var nodes [8][]int
	for n := 0; n < threads; n++ {
		pkg, core := cpuPlace(c, n)
		dir := fmt.Sprintf("sys/devices/system/cpu/cpu%d", n)
		if n != 0 {
			tr.file(dir+"/online", "1\n")
		}
		tr.file(dir+"/topology/physical_package_id", fmt.Sprintf("%d\n", pkg))
		tr.file(dir+"/topology/core_id", fmt.Sprintf("%d\n", core))
		nodes[pkg] = append(nodes[pkg], n)
	}
	tr.file("sys/devices/system/cpu/online", fmt.Sprintf("0-%d\n", threads-1))
	for k := 0; k < c.packages; k++ {
		dir := fmt.Sprintf("sys/devices/system/node/node%d", k)
		var dist []string
		for j := 0; j < c.packages; j++ {
			dist = append(dist, map[bool]string{true: "10", false: "32"}[j == k])
		}
		tr.file(dir+"/distance", strings.Join(dist, " ")+"\n")
		per := s.memTotalKB / int64(c.packages)
		tr.file(dir+"/meminfo", fmt.Sprintf("Node %d MemTotal:       %d kB\nNode %d MemFree:        %d kB\nNode %d MemUsed:        %d kB\nNode %d HugePages_Total:     0\nNode %d HugePages_Free:      0\nNode %d HugePages_Surp:      0\n",
			k, per, k, per*8/10, k, per*2/10, k, k, k))
		for _, hp := range []string{"hugepages-2048kB", "hugepages-1048576kB"} {
			for _, f := range []string{"nr_hugepages", "free_hugepages", "surplus_hugepages"} {
				tr.file(dir+"/hugepages/"+hp+"/"+f, "0\n")
			}
		}
		for _, n := range nodes[k] {
			tr.link(fmt.Sprintf("%s/cpu%d", dir, n), fmt.Sprintf("sys/devices/system/cpu/cpu%d", n))
		}
	}
	for _, hp := range []string{"hugepages-2048kB", "hugepages-1048576kB"} {
		for _, f := range []string{"nr_hugepages", "free_hugepages", "surplus_hugepages", "resv_hugepages"} {
			tr.file("sys/kernel/mm/hugepages/"+hp+"/"+f, "0\n")
		}
	}
}

// writeMemoryBlocks writes 2 GiB memory blocks (x86-64 uses 2 GiB blocks
// above 64 GiB of RAM: arch/x86/mm/init_64.c probe_memory_block_size).
func (s fixtureSpec) writeMemoryBlocks(tr *tree) {
	if s.physGiB == 0 {
		return
	}
	tr.file("sys/devices/system/memory/block_size_bytes", "80000000\n")
	for i := int64(0); i < s.physGiB/2; i++ {
		dir := fmt.Sprintf("sys/devices/system/memory/memory%d", i*16)
		tr.file(dir+"/state", "online\n")
		tr.file(dir+"/online", "1\n")
	}
}

// smbios17Raw builds an SMBIOS 3.3 type 17 structure (DSP0134) with a
// made-up serial number that snapshots must blank.
func smbios17Raw(d dimm, i int) []byte {
	f := make([]byte, 0x5C)
	f[0], f[1] = 17, 0x5C
	binary.LittleEndian.PutUint16(f[2:], uint16(0x30+i))
	binary.LittleEndian.PutUint16(f[4:], 0x0010)
	binary.LittleEndian.PutUint16(f[6:], 0xFFFE)
	binary.LittleEndian.PutUint16(f[8:], 64)
	binary.LittleEndian.PutUint16(f[0x0A:], 64)
	if d.sizeMiB >= 0x7FFF {
		binary.LittleEndian.PutUint16(f[0x0C:], 0x7FFF)
		binary.LittleEndian.PutUint32(f[0x1C:], uint32(d.sizeMiB))
	} else {
		binary.LittleEndian.PutUint16(f[0x0C:], uint16(d.sizeMiB))
	}
	f[0x0E] = d.form
	f[0x10], f[0x11] = 1, 2
	f[0x12] = d.typeCode
	binary.LittleEndian.PutUint16(f[0x13:], 0x0080)
	binary.LittleEndian.PutUint16(f[0x15:], uint16(d.speed))
	f[0x17], f[0x18], f[0x19], f[0x1A] = 3, 4, 5, 6
	binary.LittleEndian.PutUint16(f[0x20:], uint16(d.speed))
	strs := []string{d.locator, fmt.Sprintf("P0 CHANNEL %c", 'A'+i), d.maker,
		fmt.Sprintf("8%07X", 0x1A2B3C+i*7919), "Not Specified", d.part}
	for _, s := range strs {
		f = append(append(f, s...), 0)
	}
	return append(f, 0)
}

func writePCI(tr *tree, fn pciFn) {
	root := "sys/devices/pci" + fn.addr[:7]
	if fn.bridge != "" {
		root = "sys/devices/pci" + fn.bridge[:7] + "/" + fn.bridge
	}
	dir := root + "/" + fn.addr
	tr.link("sys/bus/pci/devices/"+fn.addr, dir)
	sv, sd, _ := strings.Cut(fn.subsys, ":")
	attrs := map[string]string{
		"class": fn.class, "vendor": "0x" + fn.vendor, "device": "0x" + fn.dev,
		"subsystem_vendor": "0x" + sv, "subsystem_device": "0x" + sd,
		"numa_node": fmt.Sprint(fn.numa), "revision": "0xc1", "enable": "1",
		"modalias": fmt.Sprintf("pci:v0000%sd0000%ssv0000%ssd0000%sbc%ssc%si%s",
			strings.ToUpper(fn.vendor), strings.ToUpper(fn.dev), strings.ToUpper(sv), strings.ToUpper(sd),
			fn.class[2:4], fn.class[4:6], fn.class[6:8]),
	}
	for k, v := range fn.files {
		attrs[k] = v
	}
	for k, v := range attrs {
		tr.file(dir+"/"+k, v+"\n")
	}
	if fn.driver != "" {
		tr.link(dir+"/driver", "sys/bus/pci/drivers/"+fn.driver)
	}
	if fn.card >= 0 {
		card := fmt.Sprintf("card%d", fn.card)
		tr.file(dir+"/drm/"+card+"/dev", fmt.Sprintf("226:%d\n", fn.card))
		tr.link(dir+"/drm/"+card+"/device", dir)
		tr.link("sys/class/drm/"+card, dir+"/drm/"+card)
		render := fmt.Sprintf("renderD%d", 128+fn.card)
		tr.file(dir+"/drm/"+render+"/dev", fmt.Sprintf("226:%d\n", 128+fn.card))
		tr.link("sys/class/drm/"+render, dir+"/drm/"+render)
	}
}

// Instruction-set flags as /proc/cpuinfo prints them.
const (
	zen3Flags = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 hw_pstate ssbd mba ibrs ibpb stibp vmmcall fsgsbase bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a rdseed adx smap clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local clzero irperf xsaveerptr rdpru wbnoinvd amd_ppin brs arat npt lbrv svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold v_vmsave_vmload vgif v_spec_ctrl umip pku ospke vaes vpclmulqdq rdpid overflow_recov succor smca"
	zen4Flags = zen3Flags + " avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx512_bf16 avx512vbmi avx512_vbmi2 gfni avx512_vnni avx512_bitalg avx512_vpopcntdq flush_l1d"
	zen5Flags = zen4Flags + " avx_vnni movdiri movdir64b avx512_vp2intersect"
	iceFlags  = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 invpcid_single intel_ppin ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local split_lock_detect wbnoinvd dtherm ida arat pln pts vnmi avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq la57 rdpid fsrm md_clear pconfig flush_l1d arch_capabilities"
)

// amdAPU returns the sysfs attributes of an amdgpu APU.
func amdAPU(vram, vramUsed, gtt, gttUsed int64) map[string]string {
	return map[string]string{
		"mem_info_vram_total": fmt.Sprint(vram), "mem_info_vram_used": fmt.Sprint(vramUsed),
		"mem_info_vis_vram_total": fmt.Sprint(vram), "mem_info_vis_vram_used": fmt.Sprint(vramUsed),
		"mem_info_gtt_total": fmt.Sprint(gtt), "mem_info_gtt_used": fmt.Sprint(gttUsed),
		"current_link_speed": "Unknown", "boot_vga": "1",
	}
}

const gib = int64(1) << 30

// Strix Halo: Ryzen AI Max+ 395, 128 GiB LPDDR5X-8000 as eight 16 GiB
// packages, iGPU 1002:1586 behind bridge 00:08.1 (as in public lspci
// dumps of the Framework Desktop and HP Z2 Mini G1a).
func strixHalo(name string, vram, vramUsed, gtt, gttUsed, memTotalKB, memAvailKB, physGiB int64, params map[string]string) fixtureSpec {
	dimms := make([]dimm, 8)
	for i := range dimms {
		dimms[i] = dimm{sizeMiB: 16384, typeCode: 0x23, speed: 8000, form: 0x0B, locator: fmt.Sprintf("DIMM %d", i), maker: "Micron Technology", part: "MT62F4G32D8DV-023 WT"}
	}
	return fixtureSpec{
		name: name, kernel: "6.14.0-29-generic",
		dmi: [3]string{"Framework", "Desktop (AMD Ryzen AI Max 300 Series)", "FRANMFCP06"},
		cpu: cpuSpec{vendor: "AuthenticAMD", model: "AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", flags: zen5Flags, microcode: "0xb700032",
			family: 26, modelNum: 112, packages: 1, cores: 16, smt: 2, mhz: 3000, cacheKB: 1024},
		memTotalKB: memTotalKB, memAvailKB: memAvailKB, physGiB: physGiB, dimms: dimms,
		pci: []pciFn{
			{addr: "0000:00:08.1", class: "0x060400", vendor: "1022", dev: "150c", subsys: "0000:0000", driver: "pcieport", numa: -1, card: -1},
			{addr: "0000:c5:00.0", bridge: "0000:00:08.1", class: "0x030000", vendor: "1002", dev: "1586", subsys: "f111:000a",
				driver: "amdgpu", numa: -1, card: 1, files: amdAPU(vram, vramUsed, gtt, gttUsed)},
			{addr: "0000:c5:00.1", bridge: "0000:00:08.1", class: "0x040300", vendor: "1002", dev: "1640", subsys: "f111:000a", driver: "snd_hda_intel", numa: -1, card: -1},
		},
		params: params,
	}
}

func fixtureSpecs() []fixtureSpec {
	return []fixtureSpec{
		// 512 MiB carve-out; amdgpu.gttsize=117760 MiB and ttm.pages_limit=
		// 30146560 pages (both 115 GiB), the setting of Strix Halo guides
		// (kyuz0/amd-strix-halo-toolboxes; 123480309760 bytes in
		// mem_info_gtt_total as quoted in apellegr/Strix-Halo-Models).
		strixHalo("strix-halo-128-gtt", 512<<20, 93<<20, 123480309760, 1240<<20, 132570632, 127901212, 128,
			map[string]string{amdgpuGTTParam: "117760", ttmPagesParam: "30146560", "sys/module/ttm/parameters/page_pool_size": "30146560"}),
		// 96 GiB BIOS carve-out ("VGM" 96 GB): the kernel keeps ~31 GiB and
		// its default GTT and TTM limit are half of that.
		strixHalo("strix-halo-96-carveout", 96*gib, 310<<20, 16829440000, 22<<20, 32870000, 30110232, 32,
			map[string]string{amdgpuGTTParam: "-1", ttmPagesParam: "4108750", "sys/module/ttm/parameters/page_pool_size": "4108750"}),
		rx7900xtx(),
		rtx4090x2(),
		a100Server(),
		noGPUServer(),
	}
}

func rx7900xtx() fixtureSpec {
	dimms := []dimm{
		{sizeMiB: 32768, typeCode: 0x22, speed: 6000, form: 0x09, locator: "DIMM 1", maker: "G Skill Intl", part: "F5-6000J3040G32G"},
		{sizeMiB: 32768, typeCode: 0x22, speed: 6000, form: 0x09, locator: "DIMM 1", maker: "G Skill Intl", part: "F5-6000J3040G32G"},
	}
	xtx := map[string]string{
		"mem_info_vram_total": "25753026560", "mem_info_vram_used": "1187573760",
		"mem_info_vis_vram_total": "25753026560", "mem_info_vis_vram_used": "1120464896",
		"mem_info_gtt_total": "33350303744", "mem_info_gtt_used": "65601536",
		"mem_info_vram_vendor": "samsung", "hwmon/hwmon3/name": "amdgpu", "hwmon/hwmon3/power1_cap": "339000000",
		"hwmon/hwmon3/power1_cap_max": "402000000", "current_link_speed": "16.0 GT/s PCIe",
	}
	raphael := amdAPU(512<<20, 24<<20, 33350303744, 11<<20)
	return fixtureSpec{
		name: "rx-7900-xtx", kernel: "6.8.0-45-generic",
		dmi: [3]string{"ASUS", "System Product Name", "ROG STRIX X670E-E GAMING WIFI"},
		cpu: cpuSpec{vendor: "AuthenticAMD", model: "AMD Ryzen 9 7950X 16-Core Processor", flags: zen4Flags, microcode: "0xa601206",
			family: 25, modelNum: 97, stepping: 2, packages: 1, cores: 16, smt: 2, mhz: 4500, cacheKB: 1024},
		memTotalKB: 65142396, memAvailKB: 58002144, physGiB: 64, dimms: dimms,
		pci: []pciFn{
			{addr: "0000:03:00.0", bridge: "0000:00:01.1", class: "0x030000", vendor: "1002", dev: "744c", subsys: "1002:0e3b",
				driver: "amdgpu", numa: -1, card: 0, files: xtx},
			{addr: "0000:13:00.0", bridge: "0000:00:08.1", class: "0x030000", vendor: "1002", dev: "164e", subsys: "1043:8877",
				driver: "amdgpu", numa: -1, card: 1, files: raphael},
		},
		params: map[string]string{amdgpuGTTParam: "-1", ttmPagesParam: "8142799"},
	}
}

func rtx4090x2() fixtureSpec {
	dimms := make([]dimm, 8)
	for i := range dimms {
		dimms[i] = dimm{sizeMiB: 32768, typeCode: 0x1A, speed: 3200, form: 0x09, locator: fmt.Sprintf("DIMM_%c1", 'A'+i), maker: "Samsung", part: "M393A4K40DB3-CWE"}
	}
	smi := `index, name, pci.bus_id, pci.device_id, memory.total [MiB], memory.used [MiB], compute_cap, power.limit [W], clocks.max.sm [MHz], clocks.max.memory [MHz], driver_version
0, NVIDIA GeForce RTX 4090, 00000000:21:00.0, 0x268410DE, 24564 MiB, 412 MiB, 8.9, 450.00 W, 3120 MHz, 10501 MHz, 550.54.15
1, NVIDIA GeForce RTX 4090, 00000000:61:00.0, 0x268410DE, 24564 MiB, 4 MiB, 8.9, 450.00 W, 3120 MHz, 10501 MHz, 550.54.15
`
	return fixtureSpec{
		name: "rtx-4090-x2", kernel: "6.8.0-45-generic",
		dmi: [3]string{"ASUS", "System Product Name", "Pro WS WRX80E-SAGE SE WIFI"},
		cpu: cpuSpec{vendor: "AuthenticAMD", model: "AMD Ryzen Threadripper PRO 5975WX 32-Cores", flags: zen3Flags, microcode: "0xa008205",
			family: 25, modelNum: 8, stepping: 2, packages: 1, cores: 32, smt: 2, mhz: 3600, cacheKB: 512},
		memTotalKB: 263862576, memAvailKB: 255128032, physGiB: 256, dimms: dimms,
		pci: []pciFn{
			{addr: "0000:21:00.0", bridge: "0000:20:01.1", class: "0x030000", vendor: "10de", dev: "2684", subsys: "1043:889d", driver: "nvidia", numa: -1, card: 0},
			{addr: "0000:21:00.1", bridge: "0000:20:01.1", class: "0x040300", vendor: "10de", dev: "22ba", subsys: "1043:889d", driver: "snd_hda_intel", numa: -1, card: -1},
			{addr: "0000:2e:00.0", bridge: "0000:20:03.1", class: "0x030000", vendor: "1a03", dev: "2000", subsys: "1043:8646", driver: "ast", numa: -1, card: 2},
			{addr: "0000:61:00.0", bridge: "0000:60:01.1", class: "0x030000", vendor: "10de", dev: "2684", subsys: "1043:889d", driver: "nvidia", numa: -1, card: 1},
		},
		smi: smi,
	}
}

func a100Server() fixtureSpec {
	dimms := make([]dimm, 16)
	for i := range dimms {
		dimms[i] = dimm{sizeMiB: 32768, typeCode: 0x1A, speed: 3200, form: 0x09, locator: fmt.Sprintf("P%d_DIMM_%c1", i/8, 'A'+i%8), maker: "Samsung", part: "M393A4K40DB3-CWE"}
	}
	buses := []string{"07", "0f", "47", "4e", "87", "90", "b7", "bd"}
	var b strings.Builder
	b.WriteString("index, name, pci.bus_id, pci.device_id, memory.total [MiB], memory.used [MiB], compute_cap, power.limit [W], clocks.max.sm [MHz], clocks.max.memory [MHz], driver_version\n")
	pci := []pciFn{{addr: "0000:c2:00.0", bridge: "0000:c0:01.2", class: "0x030000", vendor: "1a03", dev: "2000", subsys: "15d9:1b0e", driver: "ast", numa: 1, card: 0}}
	for i, bus := range buses {
		fmt.Fprintf(&b, "%d, NVIDIA A100-SXM4-80GB, 00000000:%s:00.0, 0x20B210DE, 81920 MiB, 1 MiB, 8.0, 400.00 W, 1410 MHz, 1593 MHz, 535.183.01\n", i, strings.ToUpper(bus))
		bridge := fmt.Sprintf("0000:%02x:01.1", (parseHexByte(bus)/0x40)*0x40)
		pci = append(pci, pciFn{addr: "0000:" + bus + ":00.0", bridge: bridge, class: "0x030200", vendor: "10de", dev: "20b2", subsys: "10de:1463",
			driver: "nvidia", numa: i / 4, card: -1})
	}
	return fixtureSpec{
		name: "a100-80gb-server", kernel: "5.15.0-119-generic",
		dmi: [3]string{"Supermicro", "AS -4124GO-NART+", "H12DSG-O-CPU"},
		cpu: cpuSpec{vendor: "AuthenticAMD", model: "AMD EPYC 7513 32-Core Processor", flags: zen3Flags, microcode: "0xa0011d1",
			family: 25, modelNum: 1, stepping: 1, packages: 2, cores: 32, smt: 2, mhz: 2600, cacheKB: 512},
		memTotalKB: 528010432, memAvailKB: 517733308, physGiB: 512, dimms: dimms,
		pci: pci, smi: b.String(),
	}
}

func parseHexByte(s string) int {
	var v int
	fmt.Sscanf(s, "%x", &v)
	return v
}

func noGPUServer() fixtureSpec {
	dimms := make([]dimm, 16)
	for i := range dimms {
		dimms[i] = dimm{sizeMiB: 16384, typeCode: 0x1A, speed: 2666, form: 0x09, locator: fmt.Sprintf("CPU%d_DIMM_%c1", i/8+1, 'A'+i%8), maker: "Micron", part: "18ASF2G72PDZ-2G9E1"}
	}
	return fixtureSpec{
		name: "no-gpu-server", kernel: "5.14.0-427.13.1.el9_4.x86_64",
		dmi: [3]string{"Supermicro", "SYS-120U-TNR", "X12DPU-6"},
		cpu: cpuSpec{vendor: "GenuineIntel", model: "Intel(R) Xeon(R) Silver 4314 CPU @ 2.40GHz", flags: iceFlags, microcode: "0xd0003d1",
			family: 6, modelNum: 106, stepping: 6, packages: 2, cores: 16, smt: 2, mhz: 2400, cacheKB: 24576},
		memTotalKB: 263631360, memAvailKB: 251004928, physGiB: 256, dimms: dimms,
		pci: []pciFn{{addr: "0000:04:00.0", bridge: "0000:00:1c.0", class: "0x030000", vendor: "1a03", dev: "2000", subsys: "15d9:1b1b", driver: "ast", numa: 0, card: 0}},
	}
}
