"""Host memory for the Python helpers of the tests and the soak: an
anonymous mapping, page-aligned, that upstream's client can register
(register_buffer) and that Python reads and writes by offset."""
import ctypes
import mmap


class Memory:
    def __init__(self, size):
        self.mm = mmap.mmap(-1, size)
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.mm))
        self.size = size

    def write(self, off, data):
        self.mm[off:off + len(data)] = data

    def read(self, off, n):
        return bytes(self.mm[off:off + n])

    def clear(self, off, n):
        self.mm[off:off + n] = bytes(n)
