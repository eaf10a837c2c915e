package hostmem_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Alloc maps memory outside the Go heap that a store or engine can
// register: page-aligned, never moved or freed by the garbage collector,
// optionally on huge pages and locked. A Span is a checked range of it.
func ExampleAlloc() {
	mem, err := hostmem.Alloc(1<<20, hostmem.Options{TransparentHugePages: true, Populate: true})
	if errors.Is(err, hostmem.ErrNotSupported) {
		fmt.Println("page-aligned: true\n[0 0 0 0]\nrange error: true\nfreed: true")
		return // no mmap on this system
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("page-aligned:", mem.Addr()%uintptr(hostmem.PageSize()) == 0)
	page, _ := mem.Span(4096, 4096)
	fmt.Println(page.Bytes()[:4]) // zeroed
	_, err = mem.Span(1<<20-10, 20)
	fmt.Println("range error:", errors.Is(err, hostmem.ErrRange))
	if err := mem.Free(); err != nil { // refused while a store or engine has it registered
		log.Fatal(err)
	}
	_, err = page.Addr()
	fmt.Println("freed:", errors.Is(err, hostmem.ErrFreed))
	// Output:
	// page-aligned: true
	// [0 0 0 0]
	// range error: true
	// freed: true
}

// Buffers is the CSR list a batch call takes: key i owns
// Addrs[Offsets[i]:Offsets[i+1]]; Keys packs the batch's keys into one
// buffer. Both are reused across batches without allocating.
func ExampleBuffers() {
	var keys hostmem.Keys
	var bufs hostmem.Buffers
	for batch := 0; batch < 2; batch++ {
		keys.Reset()
		bufs.Addrs, bufs.Sizes, bufs.Offsets = bufs.Addrs[:0], bufs.Sizes[:0], append(bufs.Offsets[:0], 0)
		for page := 0; page < 2; page++ {
			keys.Append(fmt.Sprintf("b%d-page-%d", batch, page))
			for layer := 0; layer < 3; layer++ { // one buffer per layer
				bufs.Addrs = append(bufs.Addrs, uintptr(0x10000+layer*0x1000+page*0x100))
				bufs.Sizes = append(bufs.Sizes, 0x100)
			}
			bufs.Offsets = append(bufs.Offsets, uint64(len(bufs.Addrs)))
		}
		fmt.Println(keys.Strings(), bufs.Validate(keys.Len()), bufs.ObjectSize(1))
	}
	// Output:
	// [b0-page-0 b0-page-1] <nil> 768
	// [b1-page-0 b1-page-1] <nil> 768
}
