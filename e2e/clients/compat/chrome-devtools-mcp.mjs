import { notRunnable } from './harness.mjs'; notRunnable(['connect'], 'not written yet');
