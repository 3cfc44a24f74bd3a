import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseVmRss, rssBytes } from './memory.ts';

describe('download bench memory', () => {
  it('reads VmRSS in bytes', () => {
    const status = 'Name:\tnode\nVmPeak:\t 1000 kB\nVmRSS:\t   51234 kB\nRssAnon:\t 4 kB\n';
    assert.equal(parseVmRss(status), 51234 * 1024);
    assert.equal(parseVmRss('Name:\tnode\n'), null);
  });

  it('reads the RSS of this process', () => {
    const rss = rssBytes(process.pid);
    assert.ok(rss !== null && rss > 1024 * 1024);
  });
});
