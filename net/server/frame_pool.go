package server

import (
	"math/bits"
	"sync"

	"github.com/valyala/bytebufferpool"
)

// framePool holds request frame buffers in power-of-two capacity classes,
// so a frame of any size up to socket.request.max.bytes reuses a buffer of
// its class. (bytebufferpool.Pool keeps one calibrated size and drops
// larger buffers, which made every large produce request allocate and
// clear a fresh buffer: 8% of broker CPU with mixed request sizes.)
var framePool frameClasses

// minFrameClass is the smallest class: 4 KiB.
const minFrameClass = 12

type frameClasses struct {
	classes [64]sync.Pool // of *bytebufferpool.ByteBuffer with cap 1<<i
}

// class is the class of a buffer that holds size bytes.
func frameClass(size int) int {
	if size <= 1<<minFrameClass {
		return minFrameClass
	}
	return bits.Len(uint(size - 1))
}

// get returns an empty buffer whose capacity is at least size.
func (p *frameClasses) get(size int) *bytebufferpool.ByteBuffer {
	c := frameClass(size)
	if b, ok := p.classes[c].Get().(*bytebufferpool.ByteBuffer); ok {
		b.B = b.B[:0]
		return b
	}
	return &bytebufferpool.ByteBuffer{B: make([]byte, 0, 1<<c)}
}

// Put returns a buffer to the class its capacity fills.
func (p *frameClasses) Put(b *bytebufferpool.ByteBuffer) {
	c := cap(b.B)
	if c < 1<<minFrameClass {
		return
	}
	p.classes[bits.Len(uint(c))-1].Put(b)
}
