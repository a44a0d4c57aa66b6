# Samples Sidekiq's own retry delay (Sidekiq::JobRetry#delay_for, a private method, called as Sidekiq calls it
# for a job without sidekiq_retry_in) and prints CSV "retry,sleep_ms" (retry n = count + 1), then the version and
# the default retry count on stderr.
#
#   ruby sample.rb SAMPLES SEED
require "sidekiq"
require "sidekiq/job_retry"

samples = Integer(ARGV.fetch(0))
srand(Integer(ARGV.fetch(1)))
retrier = Sidekiq::JobRetry.new
delay_for = retrier.method(:delay_for)
# 6.x takes (worker, count, exception); 7.x adds the job hash.
extra = delay_for.arity == 4 ? [{}] : []
puts "retry,sleep_ms"
(0...Sidekiq::JobRetry::DEFAULT_MAX_RETRY_ATTEMPTS).each do |count|
  samples.times { puts "#{count + 1},#{delay_for.call(nil, count, StandardError.new, *extra) * 1000}" }
end
warn "sidekiq #{Sidekiq::VERSION}, DEFAULT_MAX_RETRY_ATTEMPTS #{Sidekiq::JobRetry::DEFAULT_MAX_RETRY_ATTEMPTS}"
