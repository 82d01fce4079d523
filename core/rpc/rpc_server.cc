// RpcServer: see rpc_server.h. Receive buffers carry wr_ids [0, recv_buffers);
// send buffers carry kSendTag | index.
#include "core/rpc/rpc_server.h"

#include <algorithm>
#include <cstring>

namespace locus::rpc {
namespace {
constexpr uint64_t kSendTag = 1ULL << 62;
constexpr size_t kBatch = 32;
constexpr Nanos kSendBufferWait = 100 * kMillisecond;

void bump(std::atomic<uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

StatusOr<std::unique_ptr<RpcServer>> RpcServer::create(Env env, const RpcServerOptions& options) {
  if (options.max_message_bytes <= kHeaderBytes + 64 || options.recv_buffers == 0 ||
      options.send_buffers == 0) {
    return invalid_argument("rpc server: max_message_bytes must exceed the header by 64 and "
                            "buffer counts must be positive");
  }
  std::unique_ptr<RpcServer> server(new RpcServer(env, options));
  LOCUS_RETURN_IF_ERROR(server->init());
  return server;
}

RpcServer::RpcServer(Env env, const RpcServerOptions& options)
    : env_(env), options_(options), handlers_(options.max_handler_types) {}

RpcServer::~RpcServer() {
  if (registered_) (void)env_.transport->deregister_memory(region_);
}

Status RpcServer::init() {
  const uint64_t count = uint64_t{options_.recv_buffers} + options_.send_buffers;
  const uint64_t bytes = count * options_.max_message_bytes;
  memory_ = AlignedBuffer(bytes);
  if (!memory_.valid()) return resource_exhausted("rpc: cannot allocate " + std::to_string(bytes) + " bytes of buffers");
  LOCUS_ASSIGN_OR_RETURN(region_, env_.transport->register_memory(memory_.data(), bytes, kLocalOnly));
  registered_ = true;
  recv_bufs_ = memory_.data();
  send_bufs_ = memory_.data() + uint64_t{options_.recv_buffers} * options_.max_message_bytes;
  free_send_.reserve(options_.send_buffers);
  for (uint32_t i = options_.send_buffers; i > 0; --i) free_send_.push_back(i - 1);
  backlog_.reserve(options_.recv_buffers);
  scratch_.resize(kBatch);
  for (uint32_t i = 0; i < options_.recv_buffers; ++i) LOCUS_RETURN_IF_ERROR(post_recv_buffer(i));
  return Status();
}

Status RpcServer::handle(uint16_t type, std::string name, Handler handler) {
  if (type == 0 || type >= handlers_.size()) {
    return invalid_argument("rpc handler type " + std::to_string(type) + " (" + name +
                            ") outside [1, " + std::to_string(handlers_.size()) + ")");
  }
  handlers_[type] = Slot{std::move(name), std::move(handler)};
  return Status();
}

RpcServerStats RpcServer::stats() const {
  RpcServerStats s;
  s.requests = counters_.requests.load(std::memory_order_relaxed);
  s.handler_errors = counters_.handler_errors.load(std::memory_order_relaxed);
  s.malformed = counters_.malformed.load(std::memory_order_relaxed);
  s.truncated = counters_.truncated.load(std::memory_order_relaxed);
  s.oversized = counters_.oversized.load(std::memory_order_relaxed);
  s.unknown_type = counters_.unknown_type.load(std::memory_order_relaxed);
  s.send_failures = counters_.send_failures.load(std::memory_order_relaxed);
  return s;
}

Status RpcServer::post_recv_buffer(uint32_t index) {
  RecvRequest r;
  r.wr_id = index;
  r.local = {recv_buf(index), options_.max_message_bytes, region_.lkey};
  return env_.transport->post_recv(std::span<const RecvRequest>(&r, 1));
}

void RpcServer::serve() {
  while (!env_.stop_requested()) serve_once(10 * kMillisecond);
}

size_t RpcServer::serve_once(Nanos timeout) {
  size_t handled = 0;
  // Receives parked while we waited for a send buffer come first.
  while (!backlog_.empty()) {
    Completion c = backlog_.front();
    backlog_.erase(backlog_.begin());
    on_completion(c);
    ++handled;
  }
  const size_t n = env_.transport->wait(scratch_, timeout);
  // on_completion may re-enter wait() through acquire_send_buffer, which
  // reuses scratch_; copy this batch out first.
  Completion batch[kBatch];
  std::copy_n(scratch_.begin(), n, batch);
  for (size_t i = 0; i < n; ++i) on_completion(batch[i]);
  return handled + n;
}

void RpcServer::on_completion(const Completion& c) {
  if (c.op == Opcode::kRecv) {
    on_request(c);
    return;
  }
  if (c.wr_id & kSendTag) {
    if (!c.ok()) bump(counters_.send_failures);
    free_send_.push_back(static_cast<uint32_t>(c.wr_id & ~kSendTag));
  }
}

void RpcServer::on_request(const Completion& c) {
  const uint32_t index = static_cast<uint32_t>(c.wr_id);
  if (index >= options_.recv_buffers) return;  // not ours; cannot happen
  const std::byte* buf = recv_buf(index);
  RequestContext ctx;
  ctx.client = c.peer;
  Status problem;
  if (c.status == WcStatus::kLocalLengthError) {
    bump(counters_.oversized);
    problem = invalid_argument("request larger than the server's " +
                               std::to_string(options_.max_message_bytes) + "-byte message limit");
  } else if (!c.ok()) {
    bump(counters_.malformed);
    problem = invalid_argument("request failed in transport");
  } else if (c.byte_len < kHeaderBytes) {
    bump(counters_.truncated);
    problem = invalid_argument("truncated request: " + std::to_string(c.byte_len) +
                               " bytes, shorter than the " + std::to_string(kHeaderBytes) +
                               "-byte header");
  } else {
    const MessageHeader h = read_header(buf);
    ctx.type = h.type;
    ctx.request_id = h.request_id;
    if (h.magic != kMagic || h.kind != kKindRequest) {
      bump(counters_.malformed);
      problem = invalid_argument("malformed request: bad magic or kind");
    } else if (h.payload_bytes != c.byte_len - kHeaderBytes) {
      bump(counters_.truncated);
      problem = invalid_argument("request header says " + std::to_string(h.payload_bytes) +
                                 " payload bytes but " + std::to_string(c.byte_len - kHeaderBytes) +
                                 " arrived");
    } else if (h.type == 0 || h.type >= handlers_.size() || !handlers_[h.type].handler) {
      bump(counters_.unknown_type);
      problem = invalid_argument("unknown request type " + std::to_string(h.type));
    }
  }
  if (!problem.is_ok()) {
    (void)post_recv_buffer(index);
    respond_error(ctx.client, ctx.type, ctx.request_id, problem);
    return;
  }

  const int64_t send_index = acquire_send_buffer();
  if (send_index < 0) {
    // Every response buffer is stuck on unresponsive clients; drop this one.
    (void)post_recv_buffer(index);
    bump(counters_.send_failures);
    return;
  }
  bump(counters_.requests);
  Reader reader(std::span<const std::byte>(buf + kHeaderBytes, c.byte_len - kHeaderBytes));
  std::byte* out = send_buf(static_cast<uint32_t>(send_index));
  Writer writer(std::span<std::byte>(out + kHeaderBytes, options_.max_message_bytes - kHeaderBytes));
  const WorkTimer handling(env_);
  Status st = handlers_[ctx.type].handler(ctx, reader, writer);
  // Handlers run in zero simulated time; their cost is charged here, by
  // the bytes they took in and gave out.
  env_.cpu->charge_work(handlers_[ctx.type].name, handling.elapsed(), reader.size() + writer.size());
  (void)post_recv_buffer(index);  // after the handler: it read the request in place
  if (st.is_ok() && !writer.ok()) {
    st = internal_error(handlers_[ctx.type].name + ": response exceeds the message limit");
  }
  if (!st.is_ok()) bump(counters_.handler_errors);
  respond(ctx.client, ctx.type, ctx.request_id, st, send_index, st.is_ok() ? writer.size() : 0);
}

int64_t RpcServer::acquire_send_buffer() {
  const Nanos deadline = env_.clock->now() + kSendBufferWait;
  while (free_send_.empty()) {
    const Nanos left = deadline - env_.clock->now();
    if (left <= 0) return -1;
    const size_t n = env_.transport->wait(scratch_, left);
    for (size_t i = 0; i < n; ++i) {
      const Completion& c = scratch_[i];
      if (c.op == Opcode::kRecv) {
        backlog_.push_back(c);
      } else {
        on_completion(c);
      }
    }
  }
  const uint32_t i = free_send_.back();
  free_send_.pop_back();
  return i;
}

void RpcServer::respond_error(NodeId client, uint16_t type, uint64_t request_id,
                              const Status& status) {
  if (client == kInvalidNode) return;
  const int64_t send_index = acquire_send_buffer();
  if (send_index < 0) {
    bump(counters_.send_failures);
    return;
  }
  respond(client, type, request_id, status, send_index, 0);
}

void RpcServer::respond(NodeId client, uint16_t type, uint64_t request_id, const Status& status,
                        int64_t send_index, size_t payload_bytes) {
  std::byte* out = send_buf(static_cast<uint32_t>(send_index));
  if (!status.is_ok()) {
    const size_t cap = options_.max_message_bytes - kHeaderBytes;
    payload_bytes = std::min(status.message().size(), cap);
    std::memcpy(out + kHeaderBytes, status.message().data(), payload_bytes);
  }
  MessageHeader h;
  h.type = type;
  h.kind = kKindResponse;
  h.status = static_cast<uint8_t>(status.code());
  h.payload_bytes = static_cast<uint32_t>(payload_bytes);
  h.request_id = request_id;
  write_header(out, h);
  WorkRequest wr;
  wr.wr_id = kSendTag | static_cast<uint64_t>(send_index);
  wr.op = Opcode::kSend;
  wr.remote.node = client;
  wr.local = {out, static_cast<uint32_t>(kHeaderBytes + payload_bytes), region_.lkey};
  if (!env_.transport->post(std::span<const WorkRequest>(&wr, 1)).is_ok()) {
    bump(counters_.send_failures);
    free_send_.push_back(static_cast<uint32_t>(send_index));
  }
}

}  // namespace locus::rpc
