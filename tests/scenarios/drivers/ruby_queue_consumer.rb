# A Ruby program whose main thread pops a Queue that a producer thread feeds
# only after computing SECONDS on the CPU (holding Ruby's GVL, which the
# consumer, asleep in Queue#pop, does not need).  Prints {"pid", "tid",
# "producer_tid"} before the pop; the tids are the OS threads' (gettid).
#   ruby ruby_queue_consumer.rb SECONDS
require "json"
require "fiddle"

GETTID = 186 # x86_64
def gettid
  Fiddle::Function.new(Fiddle::Handle::DEFAULT["syscall"], [Fiddle::TYPE_LONG], Fiddle::TYPE_LONG).call(GETTID)
end

seconds = (ARGV[0] || "3").to_f
$stdout.sync = true
queue = Queue.new
tids = Queue.new
producer = Thread.new do
  tids << gettid
  sleep 0.3 # the consumer is in pop before the work starts
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  n = 0
  n += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < seconds
  queue << n
end
puts JSON.generate(pid: Process.pid, tid: gettid, producer_tid: tids.pop)
item = queue.pop
producer.join
puts JSON.generate(popped: item)
