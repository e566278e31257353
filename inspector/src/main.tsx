// The inspector's entry: the stylesheet (esbuild writes it to assets/app.css) and the app, mounted
// on the page's one element. No inline script anywhere (the CSP allows none).
import { render } from 'preact';
import { App } from './components/app.js';
import './style.css';

render(<App />, document.getElementById('app')!);
